"""Name material of the blind alias world (bench/alias_world_blind.py): people of several cultures, places,
organisation roots, agencies, products, events, laws and technical terms. Written without looking at the
service's resolution rules or at bench/alias_world.py."""

from __future__ import annotations

import unicodedata

# culture: (given names, surnames); the world draws a few cultures per seed
PEOPLE: dict[str, tuple[list[str], list[str]]] = {
    "igbo_yoruba": (
        ["Ngozi", "Chiamaka", "Obinna", "Adaeze", "Tunde", "Folake", "Kelechi", "Yetunde", "Ikenna", "Bolaji"],
        ["Okafor", "Okonkwo", "Adeyemi", "Nwosu", "Balogun", "Eze", "Ogunleye", "Chukwu", "Adebayo", "Onyeka"],
    ),
    "japanese": (
        ["Haruto", "Yui", "Kenji", "Aiko", "Takeshi", "Naoko", "Ren", "Sakura", "Daichi", "Emi"],
        ["Tanaka", "Sato", "Watanabe", "Kobayashi", "Yamaguchi", "Inoue", "Kimura", "Hayashi", "Shimizu", "Mori"],
    ),
    "hispanic": (
        ["Lucía", "Mateo", "Valentina", "Andrés", "Camila", "Joaquín", "Renata", "Tomás", "Inés", "Sebastián"],
        ["Benítez", "Ordóñez", "Castillo", "Ibáñez", "Quintero", "Galván", "Muñoz", "Herrera", "Peña", "Salcedo"],
    ),
    "germanic": (
        ["Jürgen", "Annika", "Matthias", "Friederike", "Lukas", "Birgit", "Henrik", "Solveig", "Torsten", "Ingrid"],
        ["Brandt", "Köhler", "Vogel", "Lindqvist", "Haugen", "Schäfer", "Dahl", "Krüger", "Nyberg", "Østergaard"],
    ),
    "chinese": (
        ["Wei", "Xiaoling", "Jianguo", "Meilin", "Haoran", "Yuting", "Zhiwei", "Lanfen", "Qiang", "Shuang"],
        ["Wang", "Liu", "Zhao", "Huang", "Zhou", "Xu", "Sun", "Ma", "Hu", "Guo"],
    ),
    "south_asian": (
        ["Priya", "Arjun", "Kavita", "Rohan", "Sunita", "Vikram", "Ananya", "Rahul", "Meera", "Sanjay"],
        ["Iyer", "Chatterjee", "Reddy", "Menon", "Bhattacharya", "Kulkarni", "Nair", "Deshpande", "Rao", "Khan"],
    ),
    "east_african": (
        ["Wanjiru", "Otieno", "Achieng", "Kamau", "Nyambura", "Baraka", "Zawadi", "Mwangi", "Amani", "Wekesa"],
        ["Mutua", "Odhiambo", "Kiprono", "Wambui", "Njoroge", "Chebet", "Omondi", "Kariuki", "Ndungu", "Ruto"],
    ),
}
ORDER_FIRST_SURNAME = {"japanese", "chinese"}  # written family name first at home, given name first abroad

NICKNAMES = [
    ("William", "Bill"),
    ("Robert", "Bob"),
    ("Elizabeth", "Liz"),
    ("Katherine", "Kate"),
    ("Margaret", "Peggy"),
    ("Jonathan", "Jon"),
    ("Chukwuemeka", "Emeka"),
    ("Oluwaseun", "Seun"),
    ("Ekaterina", "Katya"),
    ("Francisco", "Paco"),
    ("Giuseppe", "Beppe"),
    ("Alexander", "Sasha"),
]
NICK_SURNAMES = ["Whitfield", "Carrow", "Ashdown", "Pemberton", "Okoye", "Lombardi", "Fairbairn", "Harrowgate"]

# transliteration variants of one person's name: (given variants, surname variants)
TRANSLIT_PEOPLE = [
    (["Muhammad", "Mohammed", "Mohamed"], ["Al-Rashid", "al-Rashid", "Alrashid"]),
    (["Yevgeny", "Evgeny", "Yevgeniy"], ["Kuznetsov", "Kouznetsov"]),
    (["Dmitriy", "Dmitry", "Dmitri"], ["Shevchenko", "Chevtchenko"]),
    (["Husayn", "Hussein", "Hussain"], ["Haddad", "Hadad"]),
    (["Yuriy", "Yuri", "Iouri"], ["Tchernov", "Chernov"]),
    (["Aleksandra", "Alexandra"], ["Volkova", "Wolkowa"]),
    (["Qasim", "Kassem", "Qassim"], ["Nasrallah", "Nasrala"]),
]

TITLES = [
    ("Dr.", "Dr", "Doctor"),
    ("Prof.", "Prof", "Professor"),
    ("Gen.", "Gen", "General"),
    ("Sen.", "Sen", "Senator"),
    ("Gov.", "Gov", "Governor"),
    ("Capt.", "Capt", "Captain"),
]
HONORIFICS = ["Mr.", "Ms.", "Mrs."]

PLACES = [
    "Tarrow",
    "Kelvedon",
    "Ashbury",
    "Morlaix",
    "Vinstra",
    "Osogbo",
    "Kisumu",
    "Matsue",
    "Guilin",
    "Pune",
    "Ravenna",
    "Lodève",
    "Brenmoor",
    "Halden",
    "Calder",
    "Eskra",
    "Nakuru",
    "Ilesa",
    "Zadar",
    "Kitwe",
]
DIACRITIC_PLACES = [
    "Zürich",
    "Kraków",
    "Málaga",
    "Reykjavík",
    "Tromsø",
    "Córdoba",
    "Bogotá",
    "Gdańsk",
    "Plzeň",
    "Jönköping",
    "Besançon",
    "Łódź",
    "Türkheim",
    "São Tomé",
]
UMLAUT_EXPANDED = {"ü": "ue", "ö": "oe", "ä": "ae", "ø": "oe", "å": "aa", "Ü": "Ue", "Ö": "Oe", "Ä": "Ae", "Å": "Aa"}
TRANSLIT_PLACES = [
    ["Qaraghandy", "Karaganda"],
    ["Kharkiv", "Kharkov"],
    ["Tbilisi", "Tiflis"],
    ["Almaty", "Alma-Ata"],
    ["Yekaterinburg", "Ekaterinburg"],
    ["Shymkent", "Chimkent"],
    ["Mumbai", "Bombay"],
    ["Chennai", "Madras"],
]
SAINTS = ["Ives", "Brelade", "Austell", "Columb", "Mawes", "Helier", "Kilda", "Germans", "Agnes", "Ouen"]

ORG_ROOTS = [
    "Halvorsen",
    "Kessler",
    "Marandi",
    "Obuya",
    "Teravik",
    "Castellan",
    "Norwell",
    "Sunmark",
    "Velora",
    "Brightwater",
    "Ironvale",
    "Quillon",
    "Ardent",
    "Mirelle",
    "Tavira",
    "Oakhurst",
    "Corvane",
    "Lindgard",
    "Pellucid",
    "Ravensworth",
    "Okapi",
    "Solenne",
    "Druva",
    "Kamsa",
]
ORG_TRADES = [
    "Hydraulics",
    "Shipping",
    "Biologics",
    "Foods",
    "Logistics",
    "Textiles",
    "Energy",
    "Semiconductors",
    "Insurance",
    "Cement",
    "Robotics",
    "Pharmaceuticals",
    "Telecom",
    "Minerals",
    "Aviation",
]
LEGAL = [
    ("GmbH", ""),
    ("Inc.", "Inc"),
    ("Ltd.", "Limited"),
    ("S.A.", "SA"),
    ("plc", "PLC"),
    ("Corporation", "Corp."),
    ("AG", ""),
    ("LLC", ""),
    ("Pty Ltd", ""),
]
PARTNER_SURNAMES = ["Baird", "Mwangi", "Fenwick", "Osei", "Harlow", "Quist", "Renner", "Tamura", "Vasquez", "Lund"]
PARTNER_TRADES = ["Partners", "Associates", "Engineering", "Architects", "Consulting", "Solicitors"]
SEATS = ["University", "Institute of Technology", "Museum", "Conservatory", "Polytechnic", "Library"]
PLURALS = [
    ("Laboratories", "Laboratory"),
    ("Airlines", "Airline"),
    ("Industries", "Industry"),
    ("Mills", "Mill"),
    ("Breweries", "Brewery"),
    ("Studios", "Studio"),
    ("Foundries", "Foundry"),
]

AGENCY_ADJ = ["National", "Regional", "Federal", "Coastal", "Northern", "Central", "Provincial", "Western"]
AGENCY_FIELD = [
    "Rail Safety",
    "Water Quality",
    "Seed Testing",
    "Fisheries",
    "Grid Reliability",
    "Housing Finance",
    "Dairy Standards",
    "Forest Survey",
    "Air Navigation",
    "Mine Safety",
    "Port Health",
    "Food Security",
]
AGENCY_BODY = ["Agency", "Board", "Council", "Commission", "Authority", "Institute", "Office", "Trust"]

PRODUCT_LINES = [
    "AquaSense",
    "Terralink",
    "Vitaguard",
    "Skyfold",
    "Nimbus",
    "Corelight",
    "Pathfinder",
    "Loomis",
    "Brightcell",
    "Quanta",
    "Hearth",
    "Stillwater",
]
PRODUCT_TAILS = ["Pro", "Max", "Lite", "Plus", "X"]
PROGRAMMES = [
    "Basin Plan",
    "Coastal Resilience Programme",
    "Rural Broadband Initiative",
    "Literacy Drive",
    "Malaria Elimination Plan",
    "Urban Forest Scheme",
    "Grain Reserve Programme",
    "Clean Cookstove Plan",
]
ORDINALS = [
    ("First", "1st", "I", "1"),
    ("Second", "2nd", "II", "2"),
    ("Third", "3rd", "III", "3"),
    ("Fourth", "4th", "IV", "4"),
    ("Fifth", "5th", "V", "5"),
]
EVENTS = ["Summit", "Forum", "Conference", "Games", "Expo", "Congress"]
INVERTED_EVENTS = ["Siege", "Battle", "Flood", "Uprising", "Accord", "Famine", "Strike", "Blockade"]
LAW_TOPICS = [
    "Clean Rivers",
    "Coastal Protection",
    "Data Privacy",
    "Fair Tenancy",
    "Seed Sovereignty",
    "Mine Closure",
    "Open Courts",
    "Pharmacy Practice",
    "Child Nutrition",
    "Wind Energy",
]
TREATY_KINDS = ["Treaty", "Convention", "Protocol"]

# technical or medical terms: (full term, abbreviation, other spellings)
TERMS = [
    ("chronic kidney disease", "CKD", ["Chronic Kidney Disease"]),
    ("chronic obstructive pulmonary disease", "COPD", ["Chronic Obstructive Pulmonary Disease"]),
    ("magnetic resonance imaging", "MRI", ["Magnetic Resonance Imaging"]),
    ("type 2 diabetes", "T2D", ["type II diabetes", "Type 2 Diabetes", "type-2 diabetes"]),
    ("polymerase chain reaction", "PCR", ["Polymerase Chain Reaction"]),
    ("non-small-cell lung cancer", "NSCLC", ["non-small cell lung cancer", "non small cell lung cancer"]),
    ("lithium iron phosphate", "LFP", ["lithium-iron-phosphate", "LiFePO4"]),
    ("electronic health record", "EHR", ["electronic health records", "e-health record"]),
    ("X-ray crystallography", "XRC", ["x-ray crystallography", "X ray crystallography"]),
    ("high-voltage direct current", "HVDC", ["high voltage direct current", "High-Voltage DC"]),
]
HYPHENED_NAMES = [
    ("Solar-Edge", "SolarEdge", "Solar Edge"),
    ("Tele-Nova", "TeleNova", "Telenova"),
    ("Blue-Harbour", "BlueHarbour", "Blue Harbour"),
    ("Geo-Spring", "GeoSpring", "Geospring"),
    ("Data-Weave", "DataWeave", "Dataweave"),
    ("Agri-Pulse", "AgriPulse", "Agripulse"),
]

JOBS = [
    "hydrologist",
    "cardiologist",
    "labour organiser",
    "civil engineer",
    "economist",
    "epidemiologist",
    "judge",
    "naval officer",
    "agronomist",
    "architect",
    "journalist",
    "trade negotiator",
    "geologist",
    "mayor",
    "historian",
    "software engineer",
    "midwife",
    "diplomat",
    "surveyor",
    "pharmacist",
]
FIELDS = [
    "water supply",
    "freight",
    "vaccines",
    "grain storage",
    "port services",
    "housing",
    "rail signalling",
    "textile exports",
    "mining",
    "fisheries",
    "solar power",
    "public health",
    "telecommunications",
]


def strip_accents(text: str) -> str:
    """ "José Núñez" -> "Jose Nunez"; letters without a decomposition (ø, ł) are mapped by hand."""
    text = text.replace("ø", "o").replace("Ø", "O").replace("ł", "l").replace("Ł", "L")
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def expand_umlauts(text: str) -> str:
    return strip_accents("".join(UMLAUT_EXPANDED.get(c, c) for c in text))


def initials(words: str) -> str:
    return "".join(w[0] for w in words.replace("-", " ").split() if w[0].isupper())
