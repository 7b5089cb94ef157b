//! Phrase lists of the rules classifier for the labels that have no public
//! detector of their own (interest, timing, pushback, referral), in English,
//! German, French, Spanish, Italian, Dutch and Portuguese. Each label has strong
//! phrases (worth 2) and weak ones (worth 1); the text is lowercased and folded.

use crate::coded::{Phrase, phrase as regex};

/// "not interested" and its translations, removed before looking for interest.
pub(crate) fn negated_interest() -> &'static Phrase {
    regex!(
        r"(?x)\b(not|never|no\ longer)\ (really\ |that\ |very\ |particularly\ )?interest(ed|ing)\b|\bno\ interest\b|\bkein(e|en)?\ interesse\b|\bnicht\ interessiert\b
        |\bpas\ (du\ tout\ )?intéressée?s?\b|\bne\ nous\ intéresse\ pas\b|\bno\ (nos|me)\ interesa\b|\bnon\ (siamo|sono)\ interessat[ioe]\b|\bnon\ (ci|mi)\ interessa\b
        |\bgeen\ interesse\b|\bniet\ geïnteresseerd\b|\bnão\ (temos|tenho|há)\ interesse\b|\bsem\ interesse\b"
    )
}

pub(crate) fn interested_strong() -> &'static Phrase {
    regex!(
        r"(?x)
        \binterest(ed|ing)\b|\bsounds\ (good|great|interesting|promising|useful)\b|\blet's\ (talk|chat|connect|set|do\ it|book|schedule|meet|find|hop|discuss)\b
        | \bhappy\ to\ (chat|talk|connect|hop|meet|take|learn|discuss|hear)\b|\bopen\ to\ (a|an|learning|chatting|hearing|talking|discuss)\b
        | \b(book|schedule|set\ up|arrange|grab|find)\ (a|some|something|any|time)\b|\bdemo\b|\bpilot\b|\bfree\ trial\b
        | \bpric(e|es|ing)\b|\bhow\ much\b|\bwhat\ (does|would)\ (it|this|that)\ cost\b|\bcost\ per\b|\bper\ (seat|user|license|month)\b|\bproposal\b|\bquote\b
        | \bsend\ (me|over|us)\b|\bsend\ (an|the|a\ calendar)\ invite\b|\bmore\ (info|information|details)\b|\blearn\ more\b|\btell\ me\ more\b|\bcalendly\b
        | \b(are|would)\ you\ (be\ )?(free|available)\b|\bwhat\ (time|day)s?\ (works|suits)\b|\bworks\ for\ (me|us)\b|\bcase\ stud(y|ies)\b|\breferences\b
        | \bkeen\b|\bcurious\b|\bpiqued\b|\bcould\ be\ (useful|helpful|interesting|a\ fit)\b|\bworth\ a\ (look|chat|conversation|call)\b|\bgo\ ahead\b|\bnext\ steps?\b
        | \bwho\ should\ i\ (talk|speak)\b|\bhow\ does\ (it|this|that)\ work\b|\bonboarding\b|\bwalk\ me\ through\b|\bloop(ing)?\ in\b|\bgot\ my\ attention\b
        | \bexactly\ (this|what\ we)\b|\bintegrat(e|es|ion)\ with\b|\bmy\ (number|cell|phone|mobile)\b|\bcall\ me\b|\bdeck\b
        # German
        | \binteress(ant|e|iert)\b|\bspannend\b|\bklingt\ (gut|interessant|spannend|nach)\b|\bgerne?\b|\btermin\b|\btelefon(at|ieren)\b|\bgespräch\b
        | \bwann\ (hätten|haben|passt|können)\b|\bzeit\ für\ ein\b|\b(nähere\ |weitere\ )?infos?\b|\binformationen\b|\bunterlagen\b|\bpreis(e|liste)?\b|\bkosten\b|\bangebot\b
        # French
        | \bintéress|\bprésentation\b|\bcréneau\b|\bappel\b|\brendez-vous\b|\brdv\b|\béchanger\b|\bplus\ d'(informations|infos|détails)\b|\bdémo\b|\btarifs?\b|\bdevis\b
        | \bconditions\b|\benvoyez-moi\b|\bpourquoi\ pas\b|\bvolontiers\b|\bavec\ plaisir\b|\bdisponible\b|\bcombien\b
        # Spanish
        | \bme\ interesa\b|\binteresante\b|\bsuena\ bien\b|\bllamada\b|\bagendar\b|\breunión\b|\bmás\ (información|detalles)\b|\bprecios?\b|\bpropuesta\b
        | \bpresupuesto\b|\benv[ií](a|e)me\b|\bpodemos\ (hablar|agendar|vernos|quedar)\b|\bhablamos\b|\bcon\ gusto\b|\bcuánto\ cuesta\b
        # Italian
        | \bmi\ interessa\b|\binteressante\b|\bsaperne\ di\ più\b|\bchiamata\b|\bsentirci\b|\bincontro\b|\bpreventivo\b|\bprezzi\b|\bmi\ piacerebbe\b|\bvolentieri\b
        | \b(inviate|mandate)mi\b|\bquanto\ costa\b
        # Dutch
        | \binteressant\b|\bbellen\b|\bafspraak\b|\bmeer\ (informatie|info)\b|\bprijzen\b|\bprijs\b|\bofferte\b|\bklinkt\ (goed|interessant)\b|\bstuur\ (me|mij)\b|\bsparren\b
        # Portuguese
        | \binteresse\b|\binteressante\b|\bmais\ (detalhes|informações)\b|\bligação\b|\breunião\b|\bdemonstração\b|\bpreços?\b|\bproposta\b
        | \bpodemos\ (conversar|falar|marcar)\b|\bconversar\b|\bme\ (mande|envie|manda)\b|\bcom\ certeza\b|\bparece\ bom\b|\bquanto\ custa\b
        "
    )
}

pub(crate) fn interested_weak() -> &'static Phrase {
    regex!(
        r"(?x)\byes\b|\bsure\b|\bok(ay)?\b|\bcall\b|\bmeeting\b|\bchat\b|\bpossibly\b|\bmaybe\b|\bsí\b|\bja\b|\boui\b|\bsim\b|\bgraag\b|\bcerto\b|\bclaro\b
        |\b(monday|tuesday|wednesday|thursday|friday|montag|dienstag|mittwoch|donnerstag|freitag|lundi|mardi|mercredi|jeudi|vendredi|lunes|martes|miércoles|jueves|viernes|lunedì|martedì|mercoledì|giovedì|venerdì|maandag|dinsdag|woensdag|donderdag|vrijdag|segunda|terça|quarta|quinta|sexta)\b
        |\b\d{1,2}(:\d\d)?\s?(am|pm|uhr|h)\b|\bnext\ week\b"
    )
}

pub(crate) fn not_now_strong() -> &'static Phrase {
    regex!(
        r"(?x)
        \bnot\ (right\ )?now\b|\bnot\ at\ (the|this)\ (moment|time|point)\b|\bnot\ (the\ )?right\ time\b|\bbad\ tim(e|ing)\b|\btiming\ (is\ (bad|off|wrong|not|tough|tricky|difficult)|isn't|isnt)\b
        | \bnot\ this\ (year|quarter|month|half)\b|\b(reach|circle|check|come|get|touch|follow)(ing)?\ (back|out|up|base|in)\b.{0,30}\b(in|next|after|later|around|once|when|early)\b
        | \bcircle\ back\b|\brevisit\b|\breconnect\b|\bdown\ the\ (road|line)\b|\blater\ (this|in\ the|next)\ (year|quarter|month)\b|\bmaybe\ later\b
        | \bnext\ (year|quarter|fiscal|month|half)\b|\b(in|after|within)\ (a|one|two|three|four|six|a\ few|a\ couple\ of|few|couple|\d+|\d+-\d+)\ (weeks?|months?|quarters?)(\ or\ so)?\b
        | \b(in|after|until|before)\ q[1-4]\b|\bq[1-4]\b|\bonce\ (things|we|the|our)\b|\bwhen\ things\b|\buntil\ (the|our|after|we|things)\b
        | \b(too|very|really)\ busy\b|\bswamped\b|\bslammed\b|\bheads\ down\b|\bcrunch\b|\bhiring\ freeze\b|\bno\ budget\ (until|this|right|at|for\ now)\b
        | \bbudgets?\ (is|are|get|gets)\ (set|frozen|allocated|approved)\b|\b(try|ping|contact|email|remind|ask|call)\ me\ (again\ )?(then|later|in|next|after|around|once|early)\b
        | \breminder\ in\b|\bkeep\ me\ posted\b|\bhold\ off\b|\bafter\ the\ (summer|holidays|new\ year|reorg|launch|migration)\b|\bin\ the\ (fall|autumn|spring|summer|new\ year)\b
        # German
        | \b(aktuell|momentan|derzeit|zurzeit|im\ moment|gerade)\b.{0,40}\b(kein|nicht|leider|zu)\b|\bspäter\b|\bnächste(n|s|m)?\ (jahr|quartal|monat|halbjahr)\b
        | \bim\ (herbst|frühjahr|frühling|sommer|winter|neuen\ jahr)\b|\bnach\ den\ (sommerferien|ferien|feiertagen)\b|\bzeitlich\ nicht\b|\bkeine\ zeit\b
        | \bmelden\ sie\ sich\b.{0,40}\b(nochmal|noch\ einmal|wieder|später|erneut)\b
        # French
        | \bpas\ (pour\ le|en\ ce)\ moment\b|\bpas\ maintenant\b|\bplus\ tard\b|\brecontacte[rz]?\b|\bà\ la\ rentrée\b|\bl'année\ prochaine\b|\bdébordée?s?\b
        | \bdans\ (quelques|\d+|deux|trois|six)\ (mois|semaines)\b|\ble\ trimestre\ prochain\b|\bpas\ le\ bon\ moment\b|\brevenez\ vers\ moi\b
        # Spanish
        | \bahora\ (mismo\ )?no\b|\bde\ momento\ no\b|\bpor\ (ahora|el\ momento)\ no\b|\bno\ es\ (un\ )?buen\ momento\b|\bmás\ adelante\b|\ben\ unos\ (meses|semanas)\b
        | \bel\ próximo\ (año|trimestre)\b|\bel\ año\ que\ viene\b|\bescr[ií]beme\ de\ nuevo\b|\bvuelv[ae]\ a\ (escribir|contactar)(me)?\b
        # Italian
        | \bal\ momento\b|\bnon\ è\ (il|un)\ (buon\ )?momento\b|\bnon\ è\ (una\ )?priorità\b|\bpiù\ avanti\b|\btra\ qualche\ (mese|settimana)\b|\brisentiamoci\b
        | \briscrivetemi\b|\bil\ prossimo\ anno\b|\bl'anno\ prossimo\b
        # Dutch
        | \bop\ dit\ moment\b|\bmomenteel\b|\bnu\ (even\ )?niet\b|\bvolgend\ (jaar|kwartaal)\b|\bover\ (een\ paar|enkele|twee|drie|zes|\d+)\ (maanden|weken)\b
        | \bte\ druk\b|\bprobeer\ (het\ )?(later|over|nog)\b|\bneem\ (dan\ )?(gerust\ )?(later\ )?(weer|opnieuw)\ contact\b|\blater\ dit\ jaar\b
        # Portuguese
        | \bagora\ não\b|\bno\ momento\ não\b|\bnão\ é\ o\ momento\b|\bmais\ tarde\b|\bpróximo\ (ano|trimestre|semestre)\b|\bano\ que\ vem\b|\bme\ procure\b|\bdaqui\ a\b
        | \bmais\ para\ frente\b
        "
    )
}

pub(crate) fn not_now_weak() -> &'static Phrase {
    regex!(
        r"(?x)\bnot\ a\ priority\b|\bbusy\b|\blater\b|\bfor\ now\b|\bat\ the\ moment\b|\bcurrently\b|\bright\ now\b|\bno\ budget\b|\bthis\ year\b
        |\b(in|after|around|until|a|en|im|ab|nach|nel|em|na|op|tot)\ (january|february|march|april|may|june|july|august|september|october|november|december|januar|februar|märz|juni|juli|oktober|dezember|janvier|février|mars|avril|mai|juin|juillet|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro)\b"
    )
}

pub(crate) fn objection_strong() -> &'static Phrase {
    regex!(
        r"(?x)
        \bnot\ (really\ )?interested\b|\bno\ interest\b|\bno\ thanks?\b|\bno\ thank\ you\b|\bnope\b|\bnot\ for\ us\b|\b(i'll|we'll|i\ will|we\ will)\ pass\b
        | \b(we're|we\ are|i'm|i\ am)\ (good|all\ set|fine|covered|sorted)\b|\balready\ (use|using|have|work\ with|working\ with|got|signed|partner|in\ place)\b
        | \b(happy|satisfied|content)\ with\b|\bstick\ with\b|\b(too|very|way\ too)\ (expensive|pricey|costly)\b|\bcan't\ afford\b|\bout\ of\ (our\ )?budget\b
        | \bbudget\ (doesn't|does\ not|won't)\b|\bin-?house\b|\bnot\ a\ (good\ )?fit\b|\bisn't\ a\ fit\b|\bno\ need\b|\bdon't\ (really\ )?need\b
        | \bdon't\ see\ (the|a|any)\ (need|value|point|use)\b|\b(we\ )?don't\ do\ (outbound|cold|that)\b|\b(doesn't|does\ not|won't|will\ not)\ (work|apply|make\ sense)\ for\b
        | \bwon't\ approve\b|\bnot\ (convinced|sold)\b|\bin\ search\ of\ a\ problem\b|\bwaste\ of\b|\bnot\ relevant\b|\bhow\ did\ you\ get\ (my|this|our)\b
        | \blocked\ in(to)?\b|\bnot\ going\ down\b|\bdoes\ what\ we\ need\b|\bnot\ something\ we\b|\b(i|we)\ don't\ think\ (this|that|it|cold)\b
        # German
        | \bkein(e|en)?\ (interesse|bedarf|budget)\b|\bbereits\b|\b(sind|bin)\ (damit\ |sehr\ )*zufrieden\b|\bzu\ teuer\b|\bnicht\ relevant\b|\bbrauchen\ wir\ nicht\b
        | \bnein,?\ danke\b|\blohnt\ sich\b.{0,20}\bnicht\b|\bpasst\ nicht\b|\bnicht\ interessiert\b
        # French
        | \bpas\ intéressée?s?\b|\bdéjà\ (un|une|des|équipée?s?)\b|\bpas\ besoin\b|\btrop\ cher\b|\bnon\ merci\b|\bne\ nous\ intéresse\ pas\b|\bpas\ l'utilité\b
        | \bsatisfaits?\b|\bne\ correspond\ pas\b
        # Spanish
        | \bno\ (nos|me)\ interesa\b|\bya\ (trabajamos|tenemos|usamos|contamos)\b|\bno\ necesitamos\b|\bdemasiado\ caro\b|\bno,?\ gracias\b|\bcontentos\ con\b
        | \bno\ nos\ sirve\b|\bno\ tiene\ sentido\b
        # Italian
        | \bnon\ (siamo|sono)\ interessat[ioe]\b|\babbiamo\ già\b|\bnon\ (ci|mi)\ interessa\b|\btroppo\ caro\b|\bno,?\ grazie\b|\bnon\ ci\ serve\b|\bnon\ fa\ per\ noi\b
        | \bsoddisfatti\b
        # Dutch
        | \bgeen\ (interesse|behoefte)\b|\bhebben\ (dit|al)\b|\bal\ (opgelost|geregeld)\b|\bniet\ nodig\b|\bte\ duur\b|\bnee,?\ dank\b|\btevreden\b
        # Portuguese
        | \bnão\ (temos|tenho)\ interesse\b|\bjá\ (temos|usamos|trabalhamos|utilizamos)\b|\bfora\ do\ (nosso\ )?orçamento\b|\bmuito\ caro\b|\bnão\ precisamos\b
        | \bnão,?\ obrigad[oa]\b|\bnão\ faz\ sentido\b|\bsatisfeitos\b
        "
    )
}

pub(crate) fn objection_weak() -> &'static Phrase {
    regex!(
        r"(?x)\bno\b|\bnein\b|\bnon\b|\bnee\b|\bnão\b|\bexpensive\b|\bbudget\b|\bcompetitor\b|\bthanks\ anyway\b"
    )
}

/// Wrong person, left the company, forwarded, "who is this?": an answer, but not
/// about the offer.
pub(crate) fn referral_strong() -> &'static Phrase {
    regex!(
        r"(?x)
        \bnot\ the\ right\ (person|contact)\b|\bwrong\ (person|contact|\w+)\b|\bno\ longer\ (with|at|work)\b|\bleft\ (the\ company|\w+\ in|\w+\ last)\b
        | \bforward(ed|ing)\ (this|your|it)\b|\bwho\ (are\ you|is\ this)\b|\bwhat('s|\ is)\ this\ (about|regarding)\b|\bis\ this\ (an\ )?(automated|spam|a\ bot)\b
        | \bwhere\ (did\ )?you\ (find|get)\b|\bwhich\ company\b|\bdid\ we\ meet\b|\b(he|she|they)\ (handles|is\ in\ charge\ of|looks\ after)\b
        | \bnicht\ zuständig\b|\bwenden\ sie\ sich\ an\b|\bnicht\ mehr\ (bei|in)\b
        | \bne\ (fais|suis)\ plus\b|\bmauvaise\ personne\b|\bqui\ êtes-vous\b|\bl'objet\ de\ votre\b
        | \bde\ qué\ empresa\b|\bquién\ es\b|\bno\ soy\ la\ persona\b|\bya\ no\ trabajo\b
        | \binoltrat[oa]\b|\bnon\ sono\ la\ persona\b|\bnon\ lavoro\ più\b|\bchi\ le\ ha\ dato\b
        | \bniet\ de\ (juiste|goede)\ persoon\b|\bwerk\ hier\ niet\ meer\b|\bdoorgestuurd\b
        | \bnão\ sou\ a\ pessoa\b|\bnão\ trabalho\ mais\b|\bencaminh(ei|ar)\b
        "
    )
}
