//! The rules classifier: industry and sub-industry from [`TAXONOMY`], and
//! business type, read from what a site says about itself.
//!
//! Evidence is weighted by where it is found: the company name and the
//! page title count three times, the summary twice, the rest of the text
//! once; a technology can add evidence too (an online shop system says
//! retail, a sign-in with subscription pricing says software). A keyword
//! counts once per place however often it repeats, so a
//! page cannot shout its way into an industry. Keywords are matched as
//! whole words (a keyword ending in `*` as a word prefix) in English,
//! German, French, Spanish, Italian, Dutch and Portuguese.
//!
//! Confidence combines how much evidence there is with how clearly the
//! winner beats the runner-up; an industry is only named when the evidence
//! reaches [`MIN_EVIDENCE`].

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// spec/2's business types.
pub const BUSINESS_TYPES: [&str; 7] = [
    "B2B",
    "B2C",
    "B2B2C",
    "marketplace",
    "non-profit",
    "government",
    "unknown",
];

/// Evidence below this names no industry.
pub const MIN_EVIDENCE: u32 = 3;

/// An industry, its sub-industries, and the words that point to each.
pub struct Industry {
    pub name: &'static str,
    pub keywords: &'static [&'static str],
    pub subs: &'static [(&'static str, &'static [&'static str])],
}

/// The industries a record may carry. Documented in
/// docs/decisions/domain-pool.md, "Taxonomy".
pub const TAXONOMY: &[Industry] = &[
    Industry {
        name: "Software",
        keywords: &[
            "software",
            "saas",
            "platform",
            "app",
            "cloud",
            "api",
            "developer*",
            "devops",
            "automation",
            "plattform",
            "logiciel",
            "aplicación",
        ],
        subs: &[
            (
                "Developer Tools",
                &[
                    "developer*",
                    "api",
                    "sdk",
                    "devops",
                    "open source",
                    "code",
                    "ci/cd",
                ],
            ),
            (
                "Cybersecurity",
                &[
                    "security",
                    "cybersecurity",
                    "threat*",
                    "firewall",
                    "encryption",
                    "sicherheit",
                    "sécurité",
                    "seguridad",
                ],
            ),
            (
                "Data & Analytics",
                &[
                    "analytics",
                    "data",
                    "dashboard*",
                    "business intelligence",
                    "insights",
                ],
            ),
            (
                "Marketing Technology",
                &[
                    "marketing automation",
                    "seo",
                    "crm",
                    "email marketing",
                    "campaign*",
                    "leads",
                ],
            ),
            (
                "Business Software",
                &[
                    "erp",
                    "crm",
                    "invoic*",
                    "accounting software",
                    "hr software",
                    "payroll",
                    "workflow*",
                ],
            ),
        ],
    },
    Industry {
        name: "IT Services",
        keywords: &[
            "it services",
            "it-dienstleist*",
            "managed services",
            "consulting",
            "hosting",
            "systemhaus",
            "web design",
            "webdesign",
            "agency",
            "agentur",
            "agence",
            "agencia",
            "digital agency",
        ],
        subs: &[
            (
                "Web & Digital Agency",
                &[
                    "web design",
                    "webdesign",
                    "agency",
                    "agentur",
                    "agence",
                    "agencia",
                    "digital agency",
                    "branding",
                ],
            ),
            (
                "Hosting & Infrastructure",
                &[
                    "hosting",
                    "server*",
                    "data center",
                    "rechenzentrum",
                    "colocation",
                    "vps",
                ],
            ),
            (
                "IT Consulting",
                &[
                    "it consulting",
                    "managed services",
                    "systemhaus",
                    "it-dienstleist*",
                    "outsourcing",
                ],
            ),
        ],
    },
    Industry {
        name: "Retail",
        keywords: &[
            "shop",
            "store",
            "online shop",
            "onlineshop",
            "buy",
            "cart",
            "boutique",
            "kaufen",
            "warenkorb",
            "tienda",
            "negozio",
            "winkel",
            "loja",
            "fashion",
            "mode",
        ],
        subs: &[
            (
                "Fashion & Apparel",
                &[
                    "fashion",
                    "mode",
                    "apparel",
                    "clothing",
                    "shoes",
                    "schuhe",
                    "bekleidung",
                    "moda",
                    "vêtements",
                ],
            ),
            (
                "Home & Furniture",
                &[
                    "furniture",
                    "möbel",
                    "home decor",
                    "wohnen",
                    "meubles",
                    "muebles",
                ],
            ),
            (
                "Electronics",
                &["electronics", "elektronik", "gadgets", "computer*"],
            ),
            (
                "Food & Grocery",
                &[
                    "grocery",
                    "lebensmittel",
                    "wine",
                    "wein",
                    "coffee",
                    "kaffee",
                    "tea",
                    "organic",
                ],
            ),
        ],
    },
    Industry {
        name: "Manufacturing",
        keywords: &[
            "manufactur*",
            "machinery",
            "maschinenbau",
            "industrial",
            "industrie",
            "factory",
            "production",
            "produktion",
            "hersteller",
            "fabricant",
            "fabricante",
            "engineering",
            "components",
        ],
        subs: &[
            (
                "Machinery",
                &[
                    "machinery",
                    "maschinenbau",
                    "machines",
                    "maschinen",
                    "automation",
                ],
            ),
            (
                "Automotive",
                &[
                    "automotive",
                    "automobil*",
                    "vehicle*",
                    "fahrzeug*",
                    "car parts",
                ],
            ),
            (
                "Chemicals & Materials",
                &[
                    "chemical*",
                    "chemie",
                    "plastics",
                    "kunststoff",
                    "materials",
                    "coatings",
                ],
            ),
            (
                "Electronics Manufacturing",
                &["pcb", "semiconductor*", "electronic components", "sensors"],
            ),
        ],
    },
    Industry {
        name: "Financial Services",
        keywords: &[
            "bank",
            "banking",
            "finance",
            "financial",
            "insurance",
            "versicherung",
            "invest*",
            "wealth",
            "payments",
            "fintech",
            "finanz*",
            "assurance",
            "seguros",
            "loans",
            "credit",
        ],
        subs: &[
            ("Banking", &["bank", "banking", "loans", "credit", "kredit"]),
            (
                "Insurance",
                &[
                    "insurance",
                    "versicherung*",
                    "assurance",
                    "seguros",
                    "assicurazion*",
                ],
            ),
            (
                "Investment & Wealth",
                &[
                    "invest*",
                    "wealth",
                    "asset management",
                    "vermögen*",
                    "portfolio",
                ],
            ),
            (
                "Fintech & Payments",
                &["fintech", "payments", "payment", "wallet", "crypto*"],
            ),
        ],
    },
    Industry {
        name: "Healthcare",
        keywords: &[
            "health",
            "healthcare",
            "medical",
            "clinic",
            "hospital",
            "patients",
            "doctor*",
            "pharma*",
            "dental",
            "praxis",
            "klinik",
            "gesundheit",
            "santé",
            "salud",
            "medizin*",
            "therapy",
            "therapie",
        ],
        subs: &[
            (
                "Medical Practice",
                &[
                    "clinic",
                    "praxis",
                    "doctor*",
                    "arzt",
                    "dental",
                    "zahnarzt",
                    "physiotherap*",
                    "therapy",
                ],
            ),
            (
                "Pharmaceuticals & Biotech",
                &[
                    "pharma*",
                    "biotech*",
                    "drug*",
                    "clinical trials",
                    "life sciences",
                ],
            ),
            (
                "Medical Devices",
                &[
                    "medical devices",
                    "medizintechnik",
                    "diagnostic*",
                    "devices",
                ],
            ),
            (
                "Health Tech",
                &["telehealth", "digital health", "health app", "ehr"],
            ),
        ],
    },
    Industry {
        name: "Professional Services",
        keywords: &[
            "consulting",
            "beratung",
            "law",
            "lawyer*",
            "attorney*",
            "rechtsanwalt*",
            "kanzlei",
            "accounting",
            "steuerberat*",
            "tax",
            "audit",
            "advisory",
            "conseil",
            "abogados",
            "avocat*",
        ],
        subs: &[
            (
                "Legal",
                &[
                    "law",
                    "lawyer*",
                    "attorney*",
                    "rechtsanwalt*",
                    "kanzlei",
                    "legal",
                    "avocat*",
                    "abogados",
                    "advocaten",
                ],
            ),
            (
                "Accounting & Tax",
                &[
                    "accounting",
                    "accountant*",
                    "steuerberat*",
                    "tax",
                    "audit",
                    "bookkeeping",
                    "buchhaltung",
                ],
            ),
            (
                "Management Consulting",
                &[
                    "consulting",
                    "beratung",
                    "advisory",
                    "strategy",
                    "conseil",
                    "consultoría",
                ],
            ),
            (
                "Recruiting & HR",
                &[
                    "recruiting",
                    "recruitment",
                    "staffing",
                    "personalvermittlung",
                    "headhunt*",
                    "talent",
                ],
            ),
        ],
    },
    Industry {
        name: "Marketing & Advertising",
        keywords: &[
            "marketing",
            "advertising",
            "werbung",
            "werbeagentur",
            "media",
            "pr",
            "public relations",
            "seo",
            "social media",
            "publicité",
            "publicidad",
            "branding",
        ],
        subs: &[
            (
                "Advertising Agency",
                &[
                    "advertising",
                    "werbeagentur",
                    "werbung",
                    "ad agency",
                    "creative agency",
                ],
            ),
            (
                "Digital Marketing",
                &[
                    "seo",
                    "sem",
                    "performance marketing",
                    "social media",
                    "online marketing",
                    "content marketing",
                ],
            ),
            (
                "Public Relations",
                &["pr", "public relations", "communications", "kommunikation"],
            ),
        ],
    },
    Industry {
        name: "Education",
        keywords: &[
            "education",
            "school",
            "university",
            "courses",
            "learning",
            "training",
            "academy",
            "akademie",
            "schule",
            "universität",
            "bildung",
            "école",
            "escuela",
            "students",
            "e-learning",
            "weiterbildung",
        ],
        subs: &[
            (
                "Higher Education",
                &[
                    "university",
                    "universität",
                    "université",
                    "universidad",
                    "college",
                    "hochschule",
                ],
            ),
            (
                "Schools",
                &["school", "schule", "école", "escuela", "kindergarten"],
            ),
            (
                "Online Learning",
                &[
                    "e-learning",
                    "online courses",
                    "courses",
                    "learning platform",
                    "bootcamp",
                ],
            ),
            (
                "Corporate Training",
                &[
                    "training",
                    "weiterbildung",
                    "seminar*",
                    "coaching",
                    "workshops",
                ],
            ),
        ],
    },
    Industry {
        name: "Real Estate & Construction",
        keywords: &[
            "real estate",
            "immobilien",
            "property",
            "properties",
            "construction",
            "bau",
            "bauunternehmen",
            "architect*",
            "architekt*",
            "immobilier",
            "inmobiliaria",
            "homes",
            "apartments",
            "wohnungen",
        ],
        subs: &[
            (
                "Real Estate",
                &[
                    "real estate",
                    "immobilien",
                    "property",
                    "properties",
                    "realtor*",
                    "makler",
                    "immobilier",
                    "inmobiliaria",
                ],
            ),
            (
                "Construction",
                &[
                    "construction",
                    "bau",
                    "bauunternehmen",
                    "builders",
                    "renovation",
                    "handwerk*",
                ],
            ),
            (
                "Architecture",
                &[
                    "architect*",
                    "architekt*",
                    "architecture",
                    "interior design",
                ],
            ),
        ],
    },
    Industry {
        name: "Hospitality & Travel",
        keywords: &[
            "hotel",
            "hotels",
            "restaurant",
            "travel",
            "reisen",
            "tourism",
            "tourismus",
            "booking",
            "vacation",
            "urlaub",
            "voyage",
            "viajes",
            "resort",
            "café",
            "catering",
        ],
        subs: &[
            (
                "Hotels & Lodging",
                &[
                    "hotel",
                    "hotels",
                    "resort",
                    "hostel",
                    "apartments",
                    "pension",
                    "unterkunft",
                ],
            ),
            (
                "Restaurants & Food Service",
                &[
                    "restaurant",
                    "café",
                    "catering",
                    "bar",
                    "bistro",
                    "speisekarte",
                    "menu",
                ],
            ),
            (
                "Travel & Tourism",
                &[
                    "travel", "reisen", "tourism", "tours", "vacation", "urlaub", "voyage",
                    "viajes",
                ],
            ),
        ],
    },
    Industry {
        name: "Transportation & Logistics",
        keywords: &[
            "logistics",
            "logistik",
            "shipping",
            "freight",
            "spedition",
            "transport*",
            "delivery",
            "warehouse",
            "lager",
            "courier",
            "fulfillment",
            "supply chain",
            "logistique",
        ],
        subs: &[
            (
                "Freight & Shipping",
                &["freight", "shipping", "spedition", "cargo", "forwarding"],
            ),
            (
                "Warehousing & Fulfillment",
                &["warehouse", "lager", "fulfillment", "fulfilment", "storage"],
            ),
            (
                "Passenger Transport",
                &["taxi", "bus", "airline", "passenger*", "mobility"],
            ),
        ],
    },
    Industry {
        name: "Energy & Utilities",
        keywords: &[
            "energy",
            "energie",
            "solar",
            "photovoltai*",
            "wind",
            "power",
            "strom",
            "utilities",
            "renewable*",
            "electricity",
            "gas",
            "heating",
            "heizung",
            "énergie",
            "energía",
        ],
        subs: &[
            (
                "Renewable Energy",
                &[
                    "solar",
                    "photovoltai*",
                    "wind",
                    "renewable*",
                    "erneuerbar*",
                    "green energy",
                ],
            ),
            (
                "Utilities",
                &[
                    "utilities",
                    "stadtwerke",
                    "electricity",
                    "strom",
                    "gas",
                    "water",
                ],
            ),
            ("Oil & Gas", &["oil", "petroleum", "erdöl", "drilling"]),
        ],
    },
    Industry {
        name: "Media & Entertainment",
        keywords: &[
            "news",
            "magazine",
            "publishing",
            "verlag",
            "film",
            "music",
            "musik",
            "games",
            "gaming",
            "entertainment",
            "podcast",
            "streaming",
            "tv",
            "radio",
            "zeitung",
            "journal",
        ],
        subs: &[
            (
                "Publishing & News",
                &[
                    "news",
                    "magazine",
                    "publishing",
                    "verlag",
                    "zeitung",
                    "journal",
                    "books",
                ],
            ),
            (
                "Film, Music & Streaming",
                &[
                    "film",
                    "music",
                    "musik",
                    "streaming",
                    "tv",
                    "radio",
                    "podcast",
                ],
            ),
            ("Gaming", &["games", "gaming", "esports", "spiele"]),
        ],
    },
    Industry {
        name: "Non-profit",
        keywords: &[
            "non-profit",
            "nonprofit",
            "charity",
            "donate",
            "donation*",
            "spenden",
            "verein",
            "foundation",
            "stiftung",
            "ngo",
            "volunteer*",
            "association",
            "fondation",
            "fundación",
        ],
        subs: &[
            (
                "Charity",
                &["charity", "donate", "donation*", "spenden", "fundraising"],
            ),
            (
                "Association",
                &["verein", "association", "members", "mitglieder", "club"],
            ),
            (
                "Foundation",
                &["foundation", "stiftung", "fondation", "fundación"],
            ),
        ],
    },
    Industry {
        name: "Government",
        keywords: &[
            "government",
            "ministry",
            "ministerium",
            "municipality",
            "gemeinde",
            "stadt",
            "council",
            "public administration",
            "behörde",
            "agency of",
            "gouvernement",
            "gobierno",
            "citizens",
            "bürger",
        ],
        subs: &[
            (
                "Local Government",
                &[
                    "municipality",
                    "gemeinde",
                    "stadt",
                    "city of",
                    "council",
                    "rathaus",
                    "town hall",
                ],
            ),
            (
                "National Government",
                &["ministry", "ministerium", "federal", "bundes*", "national"],
            ),
        ],
    },
];

/// Shop systems and marketplaces whose presence is evidence of retail.
const RETAIL_TECH_CATEGORIES: &[&str] = &["Ecommerce", "Cart abandonment"];

/// What the classifier reads.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClassifyInput {
    pub domain: String,
    pub company_name: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    /// Visible text of the pages, any length (the first 64 KB are read).
    pub text: String,
    /// Detected technologies: `(name, categories)`.
    pub technologies: Vec<(String, Vec<String>)>,
    /// The site has a login and a pricing page.
    pub sells_subscriptions: bool,
}

/// What the classifier concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    pub industry: Option<String>,
    pub sub_industry: Option<String>,
    pub business_type: String,
    /// 0.0-1.0: how sure the classification is.
    pub confidence: f64,
}

/// Lower-case words of `text`, with a flag for each place they came from.
struct Words {
    places: Vec<(u32, HashSet<String>, String)>,
}

impl Words {
    fn new(input: &ClassifyInput) -> Words {
        let mut places = Vec::new();
        let heading = [input.company_name.as_deref(), input.title.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let text = crate::extract::cap_bytes(&input.text, 64 * 1024);
        for (weight, place) in [
            (3, heading.as_str()),
            (2, input.summary.as_deref().unwrap_or("")),
            (1, text),
        ] {
            let lowered = place.to_lowercase();
            let words = lowered
                .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '/')
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            // Padded so phrases match on word boundaries.
            let phrase_text = format!(
                " {} ",
                lowered.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            places.push((weight, words, phrase_text));
        }
        Words { places }
    }

    /// The weighted evidence for `keywords`: each keyword once per place.
    fn evidence(&self, keywords: &[&str]) -> u32 {
        let mut total = 0;
        for (weight, words, text) in &self.places {
            for keyword in keywords {
                let found = if let Some(prefix) = keyword.strip_suffix('*') {
                    words.iter().any(|w| w.starts_with(prefix))
                } else if keyword.contains(' ') {
                    text.contains(&format!(" {keyword} "))
                } else {
                    words.contains(*keyword)
                };
                if found {
                    total += weight;
                }
            }
        }
        total
    }
}

/// Classifies one company.
pub fn classify(input: &ClassifyInput) -> Classification {
    let words = Words::new(input);
    let retail_tech = input.technologies.iter().any(|(_, cats)| {
        cats.iter()
            .any(|c| RETAIL_TECH_CATEGORIES.contains(&c.as_str()))
    });

    let mut scores: Vec<(u32, &Industry)> = TAXONOMY
        .iter()
        .map(|industry| {
            let mut score = words.evidence(industry.keywords);
            if industry.name == "Retail" && retail_tech {
                score += 4;
            }
            // Sign-in plus plans is how software is sold.
            if industry.name == "Software" && input.sells_subscriptions {
                score += 4;
            }
            (score, industry)
        })
        .collect();
    scores.sort_by_key(|s| std::cmp::Reverse(s.0));
    let (best, industry) = scores[0];
    let runner_up = scores[1].0;

    let business_type = business_type(input, &words, retail_tech);
    let (industry, sub_industry, industry_confidence) = if best >= MIN_EVIDENCE {
        let sub = industry
            .subs
            .iter()
            .map(|(name, keywords)| (words.evidence(keywords), *name))
            .filter(|(score, _)| *score >= 2)
            .max_by_key(|(score, _)| *score)
            .map(|(_, name)| name.to_owned());
        // Enough evidence (saturating at 12) and a clear margin both count.
        let amount = (f64::from(best) / 12.0).min(1.0);
        let margin = f64::from(best - runner_up) / f64::from(best);
        (
            Some(industry.name.to_owned()),
            sub,
            0.3 + 0.4 * amount + 0.3 * margin,
        )
    } else {
        (None, None, 0.0)
    };
    let type_confidence = if business_type == "unknown" { 0.0 } else { 0.2 };
    let confidence = if industry.is_some() {
        (industry_confidence * 0.85 + type_confidence * 0.75).min(1.0)
    } else {
        type_confidence
    };
    Classification {
        industry,
        sub_industry,
        business_type: business_type.to_owned(),
        confidence: (confidence * 100.0).round() / 100.0,
    }
}

/// Government and non-profit by their registries' suffixes and words;
/// then who the site sells to.
fn business_type(input: &ClassifyInput, words: &Words, retail_tech: bool) -> &'static str {
    let domain = input.domain.as_str();
    let government_suffix = [
        ".gov",
        ".gouv.fr",
        ".gov.uk",
        ".bund.de",
        ".gv.at",
        ".admin.ch",
        ".mil",
    ]
    .iter()
    .any(|s| domain.ends_with(s))
        || domain
            .split('.')
            .any(|label| label == "gov" || label == "gob" || label == "gouv");
    if government_suffix {
        return "government";
    }
    let non_profit = words.evidence(&[
        "non-profit",
        "nonprofit",
        "charity",
        "donate",
        "spenden",
        "ngo",
        "e.v.",
        "gemeinnützig*",
    ]);
    if non_profit >= 3 || (domain.ends_with(".org") && non_profit >= 1) {
        return "non-profit";
    }
    let marketplace = words.evidence(&[
        "marketplace",
        "marktplatz",
        "sellers",
        "verkäufer",
        "vendors",
        "buy and sell",
        "list your",
    ]);
    if marketplace >= 3 {
        return "marketplace";
    }
    let b2b = words.evidence(&[
        "b2b",
        "enterprise",
        "businesses",
        "for teams",
        "request a demo",
        "book a demo",
        "demo",
        "clients",
        "kunden",
        "unternehmen",
        "solutions",
        "lösungen",
        "wholesale",
        "großhandel",
        "partners",
        "industrial",
    ]) + if input.sells_subscriptions { 3 } else { 0 };
    let b2c = words.evidence(&[
        "shop",
        "cart",
        "warenkorb",
        "free shipping",
        "versandkostenfrei",
        "sale",
        "buy now",
        "jetzt kaufen",
        "customers",
        "family",
        "personal",
    ]) + if retail_tech { 4 } else { 0 };
    match (b2b >= 4, b2c >= 4) {
        (true, true) if b2b.abs_diff(b2c) <= 2 => "B2B2C",
        (true, true) if b2b > b2c => "B2B",
        (true, true) => "B2C",
        (true, false) => "B2B",
        (false, true) => "B2C",
        (false, false) => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(domain: &str, name: &str, summary: &str, text: &str) -> ClassifyInput {
        ClassifyInput {
            domain: domain.into(),
            company_name: Some(name.into()),
            summary: Some(summary.into()),
            text: text.into(),
            ..ClassifyInput::default()
        }
    }

    #[test]
    fn a_software_company_is_software_and_b2b() {
        let c = classify(&ClassifyInput {
            sells_subscriptions: true,
            ..input(
                "initech.io",
                "Initech",
                "The workflow automation platform for finance teams. Book a demo.",
                "Integrate with our API. Trusted by 2,000 businesses. Enterprise plans. Developer docs.",
            )
        });
        assert_eq!(c.industry.as_deref(), Some("Software"));
        assert_eq!(c.business_type, "B2B");
        assert!(c.confidence >= 0.6, "{c:?}");
    }

    #[test]
    fn a_german_shop_is_retail_and_b2c() {
        let mut i = input(
            "schuhhaus-meier.de",
            "Schuhhaus Meier",
            "Schuhe und Mode online kaufen – versandkostenfrei ab 50 €",
            "Warenkorb Damen Herren Sale Schuhe Stiefel Sneaker jetzt kaufen",
        );
        i.technologies = vec![("Shopify".into(), vec!["Ecommerce".into()])];
        let c = classify(&i);
        assert_eq!(c.industry.as_deref(), Some("Retail"));
        assert_eq!(c.sub_industry.as_deref(), Some("Fashion & Apparel"));
        assert_eq!(c.business_type, "B2C");
    }

    #[test]
    fn registries_and_words_say_government_and_non_profit() {
        let c = classify(&input("berlin.gov.example", "Stadt Berlin", "", ""));
        assert_eq!(c.business_type, "government");
        let c = classify(&input(
            "stiftung-wald.org",
            "Stiftung Wald",
            "Jetzt spenden für den Wald",
            "Spenden",
        ));
        assert_eq!(c.business_type, "non-profit");
        assert_eq!(c.industry.as_deref(), Some("Non-profit"));
    }

    #[test]
    fn too_little_evidence_names_no_industry() {
        let c = classify(&input("x.example", "X", "Welcome", "Hello world"));
        assert_eq!(
            (c.industry, c.business_type.as_str(), c.confidence),
            (None, "unknown", 0.0)
        );
        // Repeating a word does not add evidence.
        let c = classify(&input("y.example", "Y", "", &"hotel ".repeat(1000)));
        assert_eq!(c.industry, None);
    }

    #[test]
    fn every_business_type_is_one_of_the_spec_values() {
        for text in [
            "shop cart sale",
            "enterprise b2b solutions demo",
            "marketplace sellers vendors",
            "",
        ] {
            let c = classify(&input("z.example", "Z", text, text));
            assert!(BUSINESS_TYPES.contains(&c.business_type.as_str()), "{c:?}");
        }
    }
}
