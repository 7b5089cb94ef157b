//! Phrase families by meaning, added to the phrase lists of [`crate::lexicon`]:
//! rather than fixed sentences, each family pairs word stems with optional words
//! between them (`.{0,N}`), in English, German, French, Spanish, Italian, Dutch
//! and Portuguese, so differently worded replies with the same meaning match:
//!
//! - not now: a deferral verb or a "not now" with a future time (next quarter,
//!   after the summer, in a few months, nach Q3, après l'été, più avanti,
//!   volgend jaar, mais para frente), or not a priority / no room at present;
//! - objection: an existing vendor or tool, a solution built in-house, not
//!   relevant or not applicable, too expensive, no need, a refusal on principle;
//! - unsubscribe: remove / take off / delete me (or my address) from a list,
//!   stop or never send or contact again, erasure requests under GDPR, in each
//!   language's word order (separable verbs, clitics, negation around the verb);
//! - interest: asking for material, a demo, a proposal or results.
//!
//! The text is lowercased and folded ([`crate::util::fold`]). Each match counts
//! as a strong phrase (2) in [`crate::rules`].

use std::ops::Range;

use crate::coded::{Coded, Phrase, phrase as regex};

/// A time in the future, in the seven languages.
macro_rules! future {
    () => {
        concat!(
            r"(next|coming|following|new) (month|quarter|year|fiscal|half|semester|season|budget|spring|summer|fall|autumn|winter)",
            r"|(in|within|after|for) (a|one|two|three|four|five|six|nine|a few|a couple( of)?|few|several|some|\d+) (more )?(weeks?|months?|quarters?|years?)",
            r"|(after|past|beyond|post) (the |our |this )?(summer|holidays?|new year|q[1-4]|h[12]|budget|migration|launch|reorg|rollout|renewal|audit|merger|funding|conference|season|busy)",
            r"|\b(in|during|by|around|until|till|before) (the )?(spring|summer|fall|autumn|winter|new year|q[1-4]|h[12]|january|february|march|april|may|june|july|august|september|october|november|december)\b",
            r"|\bq[1-4]\b|\bh[12]\b|early next|later (this|next|in the) (year|quarter|month)|end of (the |this )?(year|quarter)|budget (cycle|year|round|planning|season)",
            r"|nächste[nsm]? (jahr|jahres|quartal|monat|halbjahr)|kommende[nsm]? (jahr|jahres|quartal|monat)|anfang (nächsten|des nächsten|kommenden) |nach (q[1-4]|ostern|weihnachten|dem sommer|der sommerpause|den ferien)|im (herbst|frühjahr|sommer|winter|neuen jahr)|in (ein paar|einigen|zwei|drei|sechs) (wochen|monaten)",
            r"|(prochain|prochaine) (trimestre|semestre|année|mois)|(trimestre|semestre|mois|année) prochain|l'an prochain|après (l'été|les vacances|les congés|la rentrée)|(en|à partir de|d'ici) (janvier|février|mars|avril|mai|juin|juillet|septembre|octobre|novembre|décembre|quelques|la fin)|dans (quelques|deux|trois|six|\d+) (mois|semaines)",
            r"|(próximo|próxima|siguiente) (año|trimestre|semestre|mes)|primer trimestre|año que viene|después (del verano|de las vacaciones|de navidad|del año)|dentro de (unos|un par|\d+|dos|tres|seis)|(en|para) (enero|febrero|marzo|abril|mayo|junio|julio|septiembre|octubre|noviembre|diciembre)",
            r"|(prossimo|prossima) (anno|trimestre|semestre|mese)|anno prossimo|dopo (l'estate|le vacanze|le ferie|natale)|(tra|fra) (qualche|un paio di|un paio|due|tre|sei|\d+) (mesi|settimane)|più avanti|nel corso dell'anno|in autunno|a settembre",
            r"|volgend (jaar|kwartaal|half jaar)|volgende maand|over (een|een paar|enkele|twee|drie|zes|\d+) (half jaar|jaar|maanden|weken|kwartaal)|na de zomer|later dit jaar|in het najaar",
            r"|(próximo|próxima) (ano|semestre|trimestre|mês)|ano que vem|mais para frente|mais adiante|depois (do verão|das férias|do carnaval)|daqui a"
        )
    };
}

/// A future time ("next quarter", "after the summer", "nach Q3", "l'an prochain").
fn future_time() -> &'static Phrase {
    regex!(concat!(r"\b(", future!(), r")"))
}

/// A deferral verb or an "again" word ("reach out", "check back", "wieder",
/// "reparler", "de nuevo", "nog eens").
fn deferral() -> &'static Phrase {
    regex!(
        r"\b((reach|circle|check|come|get|touch|follow|ping|contact|email|write|call|try|ask|remind|hit|revisit|reconnect|talk|chat|speak|look|pick|connect)(ing)? (me |us |this |it )?(back |out |up |again |base |in )?|(reach|check|come|ping|contact|email|write|call|try|revisit|reconnect|talk|look|touch|pick)|(again|wieder|erneut|nochmal|noch einmal|de nouveau|à nouveau|reparler|reparlerons|repren\w*|revoir|de nuevo|otra vez|retomar|di nuovo|riparl\w*|nog eens|opnieuw|novamente|de novo)|(again|wieder|erneut|nochmal|de nouveau|à nouveau|de nuevo|otra vez|di nuovo|nog eens|opnieuw|novamente|de novo)|(reverrons|reparlerons|recontacter|revenez|revenir))"
    )
}

/// Timing replies: the phrase families, plus every future time within a few
/// words (40 bytes) of a deferral verb or an "again" word, either order. The
/// pairing is done here rather than in one pattern with a gap, which made the
/// automaton large and slow.
pub(crate) fn not_now_count(t: &Coded) -> usize {
    let anchors: Vec<Range<usize>> = deferral().spans(t).collect();
    let paired = future_time()
        .spans(t)
        .filter(|f| {
            anchors.iter().any(|a| {
                (f.start + 1 >= a.end && f.start <= a.end + 40)
                    || (a.start + 1 >= f.end && a.start <= f.end + 40)
            })
        })
        .count();
    not_now_rest().count(t) + paired
}

fn not_now_rest() -> &'static Phrase {
    regex!(concat!(
        r"\b(",
        // a far-off time is a deferral by itself (a near one, "next week", is not)
        r"(in|within|after) (a few|a couple of|several|two|three|four|six|\d+) months|in (ein paar|einigen|zwei|drei|sechs|\d+) monaten|dans (quelques|deux|trois|six|\d+) mois|dentro de (unos|un par de|dos|tres|seis|\d+) meses|en (unos|un par de|dos|tres|seis) meses|(tra|fra) (qualche|un paio di|due|tre|sei|\d+) mesi|over (een paar|enkele|twee|drie|zes|\d+) maanden|over een half jaar|(daqui a|em|dentro de) (alguns|uns|dois|três|seis|\d+) meses",
        // seasons ahead, in every language
        r"|(à|en|cet|d'ici) l?'?(automne|printemps|été)|au (printemps|début de l'année prochaine)|en (otoño|primavera)|(in|a) (autunno|primavera)|in (het )?(najaar|voorjaar)|(no|na) (outono|primavera)|im (herbst|frühjahr|frühling)|(in the |this |next )(fall|autumn|spring)",
        // postponing verbs
        r"|(postpone|push (it |this |that )?(back|out)|defer|delay|shelve)\w*|verschieb\w*|vertag\w*|(reporter|repousser|décaler)\w*|(aplaz|pospon|postergar|posterg)\w*|(rimand|rinvi|posticip)\w*|(uitstel|uitgesteld|verschuiven)\w*|(adiar|adiamos|adie)\w*",
        r"|(después (del verano|de las vacaciones|de navidad)|dopo (l'estate|le vacanze|le ferie)|après (l'été|les vacances|les congés)|nach (dem sommer|der sommerpause|den ferien|q[1-4])|na de zomer|depois (do verão|das férias)|(next|coming) (quarter|fiscal|half)|budget (cycle|year|round) )",
        // "not now" words near a time, or not a priority / no capacity at present
        r"|(don't|do not|doesn't|won't|no|not|without|lack) (have |got )?(the |any |enough )?(bandwidth|capacity|time|resources|headcount|room|budget) (for (this|it|that) )?(this|right now|at the moment|for now|currently|until|before|now|at present)",
        r"|(este|esta|ce|cette|dieses|diesen|diese|questo|questa|quest'|dit|deze|neste|nesta|este) ?(trimestre|mes|mês|año|ano|mois|année|quartal|jahr|monat|anno|mese|kwartaal|jaar|maand|semestre|halbjahr) .{0,20}(no|não|pas|nicht|kein\w*|non|niet|geen|nada)\b|(no|não|pas|nicht|non|niet) .{0,20}(este|ce|cette|dieses|diesen|questo|quest'|dit|deze|neste|este) ?(trimestre|mes|mês|año|ano|mois|année|quartal|jahr|monat|anno|mese|kwartaal|jaar|maand)",
        r"|(not|isn't|is not|no|aren't|can't|cannot|won't|don't|do not|doesn't) .{0,40}(right now|at the moment|at this (time|point|stage)|currently|for now|this (week|month|quarter|half|year|season))",
        r"|(not|isn't|no|low) (a |our |the )?(top |big |high |real )?priority",
        r"|timing (is |isn't |is not )?(off|wrong|bad|not right)|wrong time|not the right (time|moment)|no (bandwidth|capacity|room|time) (for|to|right|at|this)",
        r"|(can't|cannot|not able to|unable to|no way to) (take (this|it|that) on|look at|prioriti[sz]e|consider|evaluate)",
        // "again" words with a future time, either order, and future-tense talk of later
        r"|pas d'actualité|(park|shelve|table|pause|parking|parked) (this|it|that)|aparca(do|mos)|in (de )?(ijskast|wacht)|on hold|auf eis",
        // German
        r"|andere(n)? prioritäten|(wieder )?auf der agenda|erst (nach|im|ab|in|wieder|nächst)|(dann|später|nochmal|erneut|wieder) (gern(e)? )?(melden|kontaktieren|schreiben|ansprechen)|(gern(e)?|bitte) (dann |später )?(nochmal|noch einmal|erneut|wieder) (melden|schreiben)",
        // French
        r"|(pas|plus) (pour le moment|maintenant|en ce moment|tout de suite|prioritaire|une priorité)",
        r"|ce n'est pas (le moment|la priorité)",
        // Spanish
        r"|(ahora|de momento|por ahora|en este momento)( mismo)? no|no es (prioridad|una prioridad|el momento)|(escr[ií]b(eme|enos|anos|ame)|contáctanos|contácteme|vuelv[ae]) (de nuevo|otra vez|más adelante|a escribir|en)",
        // Italian
        r"|per (ora|adesso|il momento) no|non (ora|adesso|in questo momento|è il momento)|(ricontatta|risenti|riscrivi|ricontatt)(temi|teci|mi|ci|amoci|rci)|siamo pieni",
        // Dutch
        r"|(nu|op dit moment|momenteel) (even )?(niet|geen)|geen (ruimte|tijd|prioriteit)|(nog eens|opnieuw|later) (contact|mailen|bellen)|neem .{0,30}(contact|op)",
        // Portuguese
        r"|(agora|no momento|por enquanto|neste momento) não|não é (o momento|prioridade|uma prioridade)|(retomar|voltar a falar|volte a (falar|entrar)|fale comigo|me procure)|sem tempo",
        r")"
    ))
}

fn objection_rest() -> &'static Phrase {
    regex!(concat!(
        r"\b(",
        // an existing tool, vendor or solution
        r"(already|currently) (have|got|use|using|run|running|work with|working with|partner with|pay for|rely on)|(we've|we have|we) (already )?got (a|an|our|one)",
        r"|(have|got|use|using) (a|an|our own|another|our) (tool|solution|vendor|provider|platform|system|partner|agency|team|process) (for|that|which|in place|already)",
        r"|(covers?|handles?|does) (everything|all|what) (we|i) need|(we're|we are|we've) (already )?committed to \w+\s*[.!,]|committed to (our|another) (current |existing )?(vendor|provider|tool|platform|partner|contract)|under contract|(signed|locked in) with|stick(ing)? with|(not|won't|no plans to|aren't) (be )?(switch|chang)(ing)?|happy with (our|what|the one)",
        // built in-house
        r"|in-?house|(built|build|building|developed|made) (it |this |that |our own |my own |something )?(ourselves|internally|our own|in house)|(do|handle) (it|this|that) (ourselves|internally|in-house)",
        // not relevant, not applicable, not for us
        r"|(doesn't|does not|don't|do not|won't) (really )?(apply|fit|relate|matter|concern)|(not|isn't|is not) (really )?(relevant|applicable|a (good )?fit|for (us|me))|nothing for us|hard pass|pass on (this|that)",
        r"|we (don't|do not) (sell|do|use|run|need|have|buy|work with)|moved? the needle|hate (these|this|those|such)",
        // price
        r"|(way |far |well )?(beyond|outside|above) (what|our|my)|(more|way more|much more) than (we|i)('d| would| can| could)|can't justify|(too|way too|far too) (expensive|pricey|costly|much)",
        // no need
        r"|no (use|need|requirement) for|(don't|do not|dont) (really )?(need|require)|not (looking|in the market) for|(we're|we are) (good|all set|fine|covered|sorted)",
        // "already" next to a use/have/work verb, either order, in every language
        r"|already (use|using|have|has|got|work|working|run|running|pay|paying|do|does|doing|handle|handles|cover|covers|covered|set|signed|partner|built|own|rely)",
        r"|(nutzen|verwenden|haben|arbeiten|setzen|lösen|betreiben) (wir )?(schon|bereits)",
        r"|(avons|utilisons|travaillons|disposons|sommes) déjà",
        r"|ya (tenemos|usamos|trabajamos|contamos|utilizamos|disponemos)|(tenemos|usamos|trabajamos|utilizamos) ya",
        r"|(usiamo|utilizziamo|abbiamo|lavoriamo|collaboriamo|disponiamo) già",
        r"|(gebruiken|hebben|werken|zitten) (we |wij )?(al|reeds)\b",
        r"|já (temos|usamos|trabalhamos|contamos|utilizamos)|(temos|usamos|trabalhamos|utilizamos) já",
        // our own system does it ("our CRM handles this", "das lösen wir mit unserem CRM")
        r"|(lösen|machen|erledigen|regeln) wir (mit|über|intern|selbst)",
        // tried before and it did not work; no value
        r"|(didn't|did not|never) (work|pay off|help|deliver)|(never|won't|wouldn't) get (any |much )?value|no (real )?value",
        // decided against; sees no value or point; makes no sense for us (negation
        // with a value noun, in every language)
        r"|decided (against|not to)|décidé de ne pas|(decidimos|hemos decidido) no|abbiamo deciso di non|besloten (om )?(niet|het niet)|decidimos não",
        r"|(don't|do not|can't|cannot|fail to) see (the |any |much |a )?(value|point|need|benefit|use|reason)|(sehen|sehe) (darin |hier )?(keinen|kein|keine) (nutzen|mehrwert|sinn|bedarf|vorteil)|(ne|n') ?(en )?(voyons|vois) pas (l'intérêt|l'utilité|la valeur|le besoin|d'intérêt)|no (le )?(vemos|veo) (el |ningún |mucho )?(valor|sentido|beneficio|interés|necesidad)|non (ne |ci )?(vediamo|vedo) (il |alcun |nessun )?(valore|senso|vantaggio|bisogno|interesse)|(zien|zie) (er )?(geen|het nut niet|de waarde niet)( nut| waarde| meerwaarde| zin)?",
        r"|(doesn't|does not|wouldn't|won't) make (much |any )?sense|makes no sense|(nicht|wenig|kaum) sinnvoll|ergibt (für uns )?keinen sinn|n'a pas (de|beaucoup de) sens|no tiene (mucho |ningún )?sentido|non ha (molto |alcun )?senso|heeft (voor ons )?geen zin|(não|nao) faz (muito )?sentido",
        r"|(not|nicht|pas|no|non|niet|não) (really |wirklich |vraiment |realmente |davvero |echt |muito )?(suitable|adapted|geeignet|passend|adapté|adaptée|adecuad[oa]|adatt[oa]|geschikt|adequad[oa])|outbound isn't|(isn't|is not) how we",
        // not needed; enough of what the offer brings
        r"|(isn't|is not|not|aren't) (really |actually )?(needed|necessary|required)|(nicht|kaum) (nötig|notwendig|erforderlich)|pas (vraiment )?nécessaire|no (es |nos es |resulta )?necesario|non (è |ci è )?necessario|não é (necessário|preciso)|(get|have|generate|got) (more than )?enough (leads|pipeline|business|customers|clients|demand|meetings)|genug (leads|kunden|anfragen)|assez de (leads|clients)|suficientes (leads|clientes)|abbastanza (lead|clienti)|genoeg (leads|klanten)",
        // German
        r"|(anderen|einen|unseren|unserem|bestehenden) (anbieter|dienstleister|partner)|(schon|bereits) seit|wechseln (nicht|wir nicht)|(machen|entwickeln|lösen) (das |wir )*(selbst|intern)\b|eigene[nr]? (lösung|tool|entwicklung)|uninteressant|nichts für uns|betrifft uns nicht|kein(en)? (bedarf|interesse|budget)|(brauchen|benötigen) (wir )?(das |so etwas |sowas )?(nicht|kein)",
        // French
        r"|(déjà|avons) (une|un|des) (solution|outil|prestataire|fournisseur|partenaire)|en interne|nous-mêmes|ne nous concerne pas|(pas|peu) (pertinent|adapté|concernés?)|pas pour nous|pas besoin|n'en avons pas besoin|trop cher",
        // Spanish
        r"|ya (contamos|tenemos|usamos|trabajamos)|(un|otro) proveedor|nosotros mismos|internamente|no (lo |la |los )?necesitamos|no (nos )?aplica|no es para nosotros|no nos (sirve|interesa)|demasiado caro",
        // Italian
        r"|abbiamo già|(un|altro) fornitore|ci troviamo bene|noi stessi|non (ci|mi) (serve|interessa|riguarda)|non fa per noi|non è rilevante|fuori (dal nostro |dal )?budget|troppo caro",
        // Dutch
        r"|(hebben|gebruiken) (hier )?(al|al een|reeds)|al een (oplossing|tool|leverancier|partner)|(doen|regelen) (we|wij) (dat |het )?zelf|niets voor ons|niet (relevant|van toepassing|nodig)|geen (interesse|behoefte)|te duur",
        // Portuguese
        r"|já (temos|usamos|trabalhamos|utilizamos|contamos)|(uma|outra) (ferramenta|solução)|nós mesmos|internamente|não (se aplica|é para nós|é relevante|precisamos)|não (tenho|temos) interesse|muito caro|caro demais",
        r")"
    ))
}

/// How many `b` matches start within `gap` bytes after the end of an `a` match:
/// "A, a few words, then B" without a gap inside one large pattern.
fn near(a: &Phrase, b: &Phrase, t: &Coded, gap: usize) -> usize {
    let bs: Vec<usize> = b.spans(t).map(|m| m.start).collect();
    a.spans(t)
        // A byte of slack at each end, so two words that share their edge
        // character (a space or an apostrophe) still pair.
        .filter(|m| bs.iter().any(|&s| s + 1 >= m.end && s <= m.end + gap + 1))
        .count()
}

/// Objections: the phrase families plus word pairs a few words apart ("already
/// … use", "bereits … im Einsatz", "our CRM … handles", "tried … before",
/// "price … beyond", "gegen … entschieden").
pub(crate) fn objection_count(t: &Coded) -> usize {
    let pairs: [(&Phrase, &Phrase, usize); 9] = [
        (
            regex!(r"\b(don't|never) (buy|take meetings|respond to|reply to)\b"),
            regex!(r"\b(cold|unsolicited)\b"),
            20,
        ),
        (
            regex!(r"\b(price|pricing|cost)( point| tag)?\b"),
            regex!(r"\b(too high|beyond|above|over|out of|more than)\b"),
            20,
        ),
        (
            regex!(r"\b(schon|bereits)\b"),
            regex!(
                r"\b(nutzen|verwenden|haben|arbeiten|einsetzen|im einsatz|lösen|betreiben|machen)"
            ),
            25,
        ),
        (
            regex!(r"\bdéjà\b"),
            regex!(
                r"\b(avons|utilisons|travaillons|équipés|disposons|employons|outil|solution|prestataire|agence)"
            ),
            25,
        ),
        (
            regex!(r"\bgià\b"),
            regex!(r"\b(usiamo|utilizziamo|abbiamo|lavoriamo|collaboriamo|disponiamo)\b"),
            20,
        ),
        (
            regex!(
                r"\b(our|unser\w*|notre|nuestro|il nostro|ons|onze|nosso) (crm|tool|system|team|platform|plattform|agency|agentur|agence|agencia|agenzia|bureau|agência|software|stack|setup)\b"
            ),
            regex!(
                r"\b(handles|does|covers|already|erledigt|macht|deckt|s'en charge|lo hace|se encarga|gestisce|regelt|doet|faz|cuida)\b"
            ),
            20,
        ),
        (
            regex!(r"\b(tried|used|tested) (something|it|this|that|one|a tool|tools)\b"),
            regex!(r"\b(before|already|last year|similar|like this)\b"),
            30,
        ),
        (
            regex!(r"\b(gegen|dagegen)\b"),
            regex!(r"\bentschieden\b"),
            30,
        ),
        (regex!(r"\bentschieden\b"), regex!(r"\bgegen\b"), 20),
    ];
    let paired: usize = pairs.iter().map(|(a, b, gap)| near(a, b, t, *gap)).sum();
    objection_rest().count(t) + paired
}

pub(crate) fn unsubscribe() -> &'static Phrase {
    regex!(concat!(
        r"\b(",
        // remove / take off / delete me or my address (from a list)
        r"(remove|take|delete|drop|strike|erase|scratch|cross|purge|exclude) (me|us|my (e-?mail|address|name|details|contact|data)|this (address|e-?mail)) (off|from|out)",
        r"|(want|wish|like|ask|asking|need|request) (you )?to be (removed|taken off|unsubscribed|deleted|excluded|erased)|be (removed|taken off|unsubscribed) from",
        r"|(deletion|erasure|removal) of (all )?(my |the |any )?(personal )?(data|information|details|address)|(gdpr|dsgvo|rgpd|avg|lgpd).{0,60}(delet|eras|remov|lösch|supprim|borr|elimin|cancell|verwijder|apag|exclu)",
        r"|(stop|stopped|stopping|quit|cease|ceased) (all |any )?(sending|emailing|e-mailing|contacting|messaging|writing|spamming|mailing)|(don't|do not|never) (ever )?(contact|email|e-mail|message|write to) (me|us) (again|anymore|any more)",
        r"|(don't|do not|no longer) (want|wish) (to )?(receive|get|hear from)|no (more|further) (e-?mails|emails|messages|contact|mails)",
        // an erasure noun with "my data", the law named before or after
        r"|(deletion|erasure|löschung|suppression|effacement|eliminación|supresión|cancellazione|verwijdering|exclusão|apagamento|eliminação) (of |meiner |de mes |de mis |dei miei |delle mie |van mijn |dos meus |de meus )(personal |personenbezogenen |personnelles |personales |personali |persoonlijke |pessoais )?(data|daten|données|datos|dati|gegevens|dados|details|information)",
        r"|(delet|eras|remov|lösch|supprim|borr|elimin|cancell|verwijder|apag|exclu).{0,60}(gdpr|dsgvo|rgpd|avg|lgpd)",
        // a removal verb aimed at me (a clitic or an object) and "your list / database"
        r"|(remov|delet|eras|strik|lösch|entfern|streich|supprim|retir|enlev|effac|borr|elimin|quit|cancell|rimuov|togli|verwijder|haal|schrap|exclu|apag|tir)\w*(\w(me|mi|mich|moi)|[- ](me|mi|moi)|( \S+){0,3} (me|my|us|mich|meine\w*|moi|mon|ma|mes|mi|mis|mio|mia|miei|mij|mijn|meu|minha|this address|diese adresse))\b.{0,40}(your|ihre[mnr]?|eure[mnr]?|votre|vos|su|sus|vuestra|vostra|vostro|vostri|uw|jullie|je|vossa|vosso|sua|seu) (e-?mail |mailing |mail |contact |distribution |adress|de )?(list|lists|database|mailing|distribution|verteiler|liste|datenbank|kartei|adressliste|fichier|base|lista|listado|bestand|lijst|mailinglijst|cadastro|banco de dados)",
        r"|no (vuelvan|vuelvas|volváis) a (escribir|contactar|enviar|mandar|llamar)|non (tornate|tornare) a (scriver|contattar|mandar|inviar)|não (voltem|volte) a (escrever|contactar|contatar|enviar|mandar)",
        r"|(don't|do not|no longer) want (these|your|any|more|any more|this) (messages|e-?mails|mails|emails)|(want|wish|ask) (not|never) to be contacted|(not|never) (be )?contacted .{0,30}again",
        r"|(^|[.!?] )(please |bitte |merci de |por favor,? |per favore,? |graag |por favor,? )?(stop|stopp|arrêtez|basta|parem|pare|stoppen|stop it|remove|remove me|unsubscribe|abmelden|austragen|désinscrire|désabonner|baja|cancellami|uitschrijven|afmelden|descadastrar)( please| bitte| merci| gracias| grazie| graag| obrigad[oa])?([.!]|$)",
        // "stop sending me" in the other languages, a pronoun allowed before the verb
        r"|(dejen|deja|dejad|deje|parem|pare|para|smettete|smetti|smettila|arrêtez|arrête|cessez) (de|di|d') ?(me |mi |m'|nos |ci )?(env|escrib|mand|contact|escrev|scriv|invi|mail|e-?mail|écri|contat)\w*|(hou op|stop) met (mij |me )?(te )?(mail|e-?mail|stur|schrijv|bericht)\w*|hören sie auf,? (mir|uns) .{0,20}zu (schicken|schreiben|senden|mailen)",
        // wanting to hear nothing more
        r"|(nichts|nie) mehr (von ihnen |von euch |von dir )?(hören|bekommen|erhalten|lesen)|(don't|do not|never) want to hear (from you|from your company|anything)|ne (veux|souhaite) plus (rien )?(entendre|recevoir)|no quiero saber (nada|más)|non voglio più (sentire|ricevere)|wil (niets|niks) meer (horen|ontvangen)|não quero (mais )?(saber|ouvir)",
        // a bare "stop" sentence; never signed up
        r"|(^|[.!] )(stop|stopp|arrêtez|basta|para|parem|pare|stoppen|stop it)[.!]*$|never (signed up|subscribed|opted in|agreed)|(didn't|did not) (sign up|subscribe|opt in)|nie angemeldet|jamais inscrit",
        // German (separable verbs: "melden Sie mich ... ab", "tragen Sie mich ... aus")
        r"|melden sie mich .{0,40}\bab\b|tragen sie mich .{0,40}\baus\b|nehmen sie mich .{0,40}\b(raus|heraus|aus|von)\b|(mich|meine (adresse|daten|e-mail-adresse)) .{0,30}(löschen|entfernen|austragen|abmelden)|keine (weiteren |weitere )?(nachrichten|e-?mails|mails|zusendungen|werbung)",
        // French (negation around the verb, clitics)
        r"|ne (plus|jamais) (m'|me |nous )?(envoyer|écrire|contacter|solliciter)|(me|m') (retirer|supprimer|désinscrire|enlever|radier|effacer)|(retirer|supprimer|effacer) mon (adresse|e-?mail|contact)|ne (m'|me )?(envoyez|écrivez|contactez) plus",
        // Spanish
        r"|(dar|darme|darnos) de baja|(no|nunca) (me |nos )?(envíen|envíes|manden|escriban|contacten) (más|nunca)|(borrar|eliminar|quitar)me de|(b[óo]rr|elim[íi]n|qu[íi]t)en(me)? (de|mi)",
        // Italian
        r"|cancella(rmi|temi|mi|re il mio|re la mia|re i miei)|rimuover(mi|ci)|togli(ermi|etemi)|non (inviatemi|mandatemi|scrivetemi|contattatemi|inviate|mandate|scrivete)\b.{0,20}\bpiù|non (voglio|desidero) più (ricevere|essere contattat)",
        // Dutch
        r"|uitschrijven|afmelden|(verwijder|haal) (mij|me|mijn (adres|gegevens|e-?mail))|(geen|niet langer) (e-?mails|mails|berichten) (meer|ontvangen)|niet meer (mailen|e-?mailen|benaderen|contacteren)",
        // Portuguese
        r"|descadastr|(me )?(remov|retir|exclu|tir)(a|am|e|em|ar)[- ]me|(não|nunca) me (enviem|envie|mandem|mande|contatem|contate|contactem) (mais|nunca)|(não|nunca) (quero|desejo) (mais )?receber",
        r")"
    ))
}

/// A negation, a contact verb and an "again / any more" word ("don't email me
/// again", "non contattarmi più", "ne m'envoyez plus", "no me escriban más");
/// only an opt-out when it is aimed at the writer (see [`aimed_at_me`]), since
/// "we don't send more than 50 emails" has the same shape.
pub(crate) fn negated_contact() -> &'static Phrase {
    regex!(concat!(
        r"\b(",
        r"(don't|do not|never|not|no|nicht|kein\w*|ne|n'|non|niet|geen|não|nunca) .{0,25}(contact|e-?mail|mail|writ|messag|send|reach|call|kontaktier|anschreib|schreib|send|envo|écri|contact|escrib|contact|envi|mand|scriv|contatt|invi|mand|benader|contacteer|stuur|schrijf|escrev|contat|envi|mand)\w* .{0,25}(again|anymore|any more|any longer|ever again|wieder|mehr|nochmal|plus|jamais|más|nunca más|otra vez|de nuevo|più|mai più|meer|nooit meer|opnieuw|mais|novamente|de novo)\b",
        r")"
    ))
}

/// Whether a phrase names the writer as the one not to contact: a first-person
/// object or subject, or a clitic on the verb.
pub(crate) fn aimed_at_me(phrase: &Coded) -> bool {
    regex!(
        r"\b(me|mi|m'|mich|mir|moi|nous|mij|uns|us|nos|i'm|i am|we're|we are)\b|\w(ar|er|ir|re|te)(me|mi)\b|\w-(me|moi)\b|\bm'"
    )
        .is_match(phrase)
}

/// Who is this / wrong person / do not know the company: an answer, not about
/// the offer (scored for `other`).
pub(crate) fn referral() -> &'static Phrase {
    regex!(concat!(
        r"\b(",
        r"who (are you|is this|is sending)|wer sind sie|qui êtes-vous|qui (es|est)-tu|quién (es usted|eres|son ustedes)|chi (siete|è lei|sei)|wie (bent u|ben jij|zijn jullie)|quem (é você|são vocês|é o senhor)",
        r"|(don't|do not) (recognise|recognize|know) (the|your|this) (company|firm|name|sender)|kenne (ihre|die|diese) (firma|firmen|unternehmen)? ?nicht|ne (connais|connaissons) pas (votre|cette) (entreprise|société)|no (conozco|conocemos) (su|la|esta) empresa|non (conosco|conosciamo) (la vostra|questa) (azienda|società)|ken (uw|jullie|dit) bedrijf niet|não (conheço|conhecemos) (a|essa|sua) empresa",
        r")"
    ))
}

pub(crate) fn interested() -> &'static Phrase {
    regex!(concat!(
        r"\b(",
        r"(send|share|forward|pass) (me |us |over )?(a |an |the |your |some )?(deck|one-?pager|brochure|overview|case stud|pricing|proposal|info|details|demo|video|examples?|slots?|times?)",
        r"|how (quickly|fast|long|soon|easily|easy|hard) (could|can|would|does|will|is|do)|get (this|it) (running|set up|started|going|live)|what would it take",
        r"|(might|may|could) be a (good |great )?fit|what (does |would |will )?(it|this|that) costs?|d'accord|un échange|okay pour|ok pour",
        r"|timing('s| is) (actually |really |quite )?(good|great|decent|right|perfect|fine)|good timing|perfect timing",
        r"|one-?pager|intrigued|what (kind of |sort of )?results|(good|great|a good|a great) fit|who('s| is) the (best|right) person to (set up|talk|meet|book)",
        r"|démo(nstration)?|je veux bien|voorstel|ziet er goed uit|lijkt me|terminvorschl|klingt spannend|mi sembra interessante|me parece interesante|tenho interesse|podemos marcar",
        r")"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coded::Coded;

    #[test]
    fn families_match_across_wordings() {
        for t in [
            "Honestly this isn't a priority for us right now.",
            "Das Thema ist erst nach Q3 wieder auf der Agenda.",
            "Hablemos después del verano.",
            "Kun je over een half jaar nog eens contact opnemen?",
        ] {
            assert!(not_now_count(&Coded::new(t)) > 0, "{t}");
        }
        for t in [
            "We built our own sequencing system in-house.",
            "Wir arbeiten schon seit Jahren mit einem anderen Anbieter.",
            "Ça ne nous concerne pas vraiment.",
        ] {
            assert!(objection_count(&Coded::new(t)) > 0, "{t}");
        }
        for t in [
            "Under GDPR I request deletion of all personal data you hold about me.",
            "Bitte melden Sie mich von diesen E-Mails ab.",
            "Merci de ne plus m'envoyer de mails.",
            "Non inviatemi più email, grazie.",
        ] {
            assert!(unsubscribe().is_match(&Coded::new(t)), "{t}");
        }
        for t in [
            "Sounds good, send me the deck.",
            "Not now, maybe next year.",
            "Could you take a look at your list of integrations and send it over?",
            "Can it remove the manual work from your list building? Then yes.",
            "Stop by our booth. We'd like a demo.",
            "Para nosotros es interesante, ¿podemos hablar?",
            "Pode ser interessante. Tem um material para me enviar?",
        ] {
            assert!(!unsubscribe().is_match(&Coded::new(t)), "{t}");
        }
        for t in [
            "Don't hesitate to write me again next month if anything changes.",
            "We don't send more than 50 emails a day, so this seems overkill.",
            "Nous n'envoyons pas plus de 50 emails par jour.",
            "Non inviamo più di 50 email al giorno.",
            "No enviamos más de 50 correos al día.",
        ] {
            assert!(!crate::phrases::is_unsubscribe_request(t), "{t}");
        }
        for t in [
            "No vuelvan a escribirme, por favor.",
            "Vi prego di non contattarmi più.",
            "Ne m'envoyez plus rien.",
            "Can you make sure I'm not contacted by your company again?",
            "Schicken Sie mir keine Mails mehr.",
        ] {
            assert!(crate::phrases::is_unsubscribe_request(t), "{t}");
        }
        for t in [
            "Happy to talk again next week.",
            "We're committed to growing outbound this year, let's talk.",
        ] {
            assert_eq!(not_now_count(&Coded::new(t)), 0, "{t}");
            assert_eq!(objection_count(&Coded::new(t)), 0, "{t}");
        }
    }
}
