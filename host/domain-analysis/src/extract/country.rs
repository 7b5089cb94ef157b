//! Countries: JSON-LD `addressCountry` values (a code or a name) to ISO
//! 3166-1 alpha-2, and the default phone region of a domain.

use phonenumber::country::Id;

/// ISO 3166-1 alpha-2 in upper case, from an alpha-2 or alpha-3 code or a
/// common country name (English and the main European languages). Unknown
/// names give `None` rather than a guess.
pub fn country_code(value: &str) -> Option<String> {
    let value = value.trim().trim_end_matches('.');
    if value.len() == 2 && value.bytes().all(|b| b.is_ascii_alphabetic()) {
        let code = value.to_ascii_uppercase();
        // The United Kingdom's ccTLD is not its ISO code.
        let code = if code == "UK" { "GB".to_owned() } else { code };
        return is_region(&code).then_some(code);
    }
    let lowered = value.to_lowercase();
    NAMES
        .iter()
        .find(|(_, names)| names.split('|').any(|name| name == lowered))
        .map(|(code, _)| (*code).to_owned())
}

/// Whether `code` (upper case) is a region libphonenumber knows, which
/// covers every ISO 3166-1 country and territory in use; filters check
/// their country codes with it.
pub fn is_region(code: &str) -> bool {
    code.parse::<Id>().is_ok()
}

/// The region to read national phone numbers in, from the country of the
/// company's address, else from a country-code top-level domain. Country
/// TLDs sold as generic names (`.io`, `.co`, `.ai`...) say nothing about
/// the company and give `None`, as do generic TLDs.
pub(crate) fn phone_region(country: Option<&str>, registrable: Option<&str>) -> Option<Id> {
    if let Some(region) = country.and_then(|c| c.parse::<Id>().ok()) {
        return Some(region);
    }
    const GENERIC_CC_TLDS: &[&str] = &[
        "io", "co", "ai", "me", "tv", "fm", "ly", "cc", "ws", "to", "sh", "la", "vc", "am", "gg",
        "ag", "so", "sc", "im", "is", "nu", "tk", "cx", "xyz", "app", "eu",
    ];
    let tld = registrable?.rsplit('.').next()?;
    if tld.len() != 2 || GENERIC_CC_TLDS.contains(&tld) {
        return None;
    }
    let code = if tld == "uk" {
        "GB".to_owned()
    } else {
        tld.to_ascii_uppercase()
    };
    code.parse::<Id>().ok()
}

/// Alpha-3 codes and names, `|`-separated, lower case.
const NAMES: &[(&str, &str)] = &[
    ("AR", "arg|argentina|argentinien|argentine"),
    ("AT", "aut|austria|österreich|osterreich|autriche"),
    ("AU", "aus|australia|australien|australie"),
    (
        "BE",
        "bel|belgium|belgien|belgique|belgië|belgie|bélgica|belgio",
    ),
    ("BG", "bgr|bulgaria|bulgarien|bulgarie"),
    ("BR", "bra|brazil|brasil|brasilien|brésil|brasile"),
    ("CA", "can|canada|kanada|canadá"),
    ("CH", "che|switzerland|schweiz|suisse|svizzera|suiza"),
    ("CL", "chl|chile|chili"),
    ("CN", "chn|china|chine|cina"),
    ("CO", "col|colombia|kolumbien|colombie"),
    ("CY", "cyp|cyprus|zypern|chypre"),
    (
        "CZ",
        "cze|czech republic|czechia|tschechien|česko|république tchèque",
    ),
    (
        "DE",
        "deu|germany|deutschland|allemagne|alemania|germania|duitsland",
    ),
    (
        "DK",
        "dnk|denmark|dänemark|danmark|danemark|dinamarca|danimarca",
    ),
    ("EE", "est|estonia|estland|estonie"),
    ("EG", "egy|egypt|ägypten|égypte|egipto"),
    (
        "ES",
        "esp|spain|spanien|españa|espana|espagne|spagna|spanje",
    ),
    ("FI", "fin|finland|finnland|suomi|finlande|finlandia"),
    ("FR", "fra|france|frankreich|francia|frankrijk"),
    (
        "GB",
        "gbr|united kingdom|uk|u.k|great britain|england|scotland|wales|großbritannien|vereinigtes königreich|royaume-uni|reino unido|regno unito",
    ),
    ("GR", "grc|greece|griechenland|grèce|grecia"),
    ("HK", "hkg|hong kong"),
    ("HR", "hrv|croatia|kroatien|croatie|hrvatska"),
    ("HU", "hun|hungary|ungarn|hongrie|magyarország"),
    ("ID", "idn|indonesia|indonesien|indonésie"),
    ("IE", "irl|ireland|irland|irlande|éire"),
    ("IL", "isr|israel|israël"),
    ("IN", "ind|india|indien|inde"),
    ("IT", "ita|italy|italien|italia|italie"),
    ("JP", "jpn|japan|japon|japón|giappone"),
    (
        "KR",
        "kor|south korea|korea|republic of korea|südkorea|corée du sud",
    ),
    ("LT", "ltu|lithuania|litauen|lituanie"),
    ("LU", "lux|luxembourg|luxemburg"),
    ("LV", "lva|latvia|lettland|lettonie"),
    ("MT", "mlt|malta|malte"),
    ("MX", "mex|mexico|méxico|mexiko|mexique|messico"),
    ("MY", "mys|malaysia|malaisie"),
    ("NG", "nga|nigeria"),
    (
        "NL",
        "nld|netherlands|the netherlands|holland|nederland|niederlande|pays-bas|países bajos|paesi bassi",
    ),
    ("NO", "nor|norway|norwegen|norge|norvège|noruega"),
    ("NZ", "nzl|new zealand|neuseeland|nouvelle-zélande"),
    ("PH", "phl|philippines|philippinen"),
    ("PL", "pol|poland|polen|polska|pologne|polonia"),
    ("PT", "prt|portugal|portogallo"),
    ("RO", "rou|romania|rumänien|roumanie|românia"),
    ("RS", "srb|serbia|serbien|serbie"),
    ("SA", "sau|saudi arabia|saudi-arabien|arabie saoudite"),
    ("SE", "swe|sweden|schweden|sverige|suède|suecia|svezia"),
    ("SG", "sgp|singapore|singapur|singapour"),
    ("SI", "svn|slovenia|slowenien|slovénie|slovenija"),
    ("SK", "svk|slovakia|slowakei|slovaquie|slovensko"),
    ("TH", "tha|thailand|thaïlande"),
    ("TR", "tur|turkey|türkiye|turkiye|türkei|turquie|turquía"),
    ("TW", "twn|taiwan"),
    ("UA", "ukr|ukraine|ucrania"),
    (
        "AE",
        "are|united arab emirates|uae|vereinigte arabische emirate|émirats arabes unis",
    ),
    (
        "US",
        "usa|united states|united states of america|us|u.s|u.s.a|america|vereinigte staaten|états-unis|estados unidos|stati uniti",
    ),
    ("VN", "vnm|vietnam|viet nam"),
    ("ZA", "zaf|south africa|südafrika|afrique du sud|sudáfrica"),
];
