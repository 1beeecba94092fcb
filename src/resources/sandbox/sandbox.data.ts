// The sandbox data set: realistic companies, people, lists and campaigns, generated from a fixed
// seed so every organization's test mode starts with exactly the same content (only ids and
// timestamps differ). Generated once per process; the store turns it into rows.

/** Small, fast, well-distributed PRNG (mulberry32); the fixed seed makes the data set reproducible. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}

const DAY = 86_400;

const COMPANY_STEMS = [
  'Northwind', 'Bluepeak', 'Brightline', 'Clearwater', 'Ironbridge', 'Silverleaf', 'Summitry', 'Harborview', 'Cedarpoint', 'Granitex',
  'Lumenade', 'Novacore', 'Vertexa', 'Atlasworks', 'Beaconry', 'Cobaltic', 'Crescendo', 'Evergreen', 'Falconer', 'Helixon',
  'Keystone', 'Maplewood', 'Meridian', 'Orbitale', 'Pioneera', 'Quantive', 'Redwoodly', 'Sterlingo', 'Tidewater', 'Willowby',
  'Amberly', 'Basalt', 'Corvana', 'Driftwood', 'Emberline', 'Fjordic', 'Glacier', 'Hollowell', 'Indigo', 'Juniper',
  'Kestrel', 'Larkspur', 'Monarch', 'Nimbus', 'Oakhurst', 'Pinnacle', 'Quarry', 'Riverstone', 'Saffron', 'Tamarack',
  'Umbra', 'Vantage', 'Westbrook', 'Yarrow', 'Zephyr',
] as const;

// Industry, the word that ends the company name, what it does (for the description), top-level domain.
const INDUSTRIES = [
  ['Software', 'Software', 'workflow software for finance teams', 'com'],
  ['Data & analytics', 'Analytics', 'a customer analytics platform', 'io'],
  ['Cybersecurity', 'Security', 'identity and access security', 'com'],
  ['Cloud infrastructure', 'Cloud', 'managed cloud infrastructure', 'io'],
  ['Healthcare', 'Health', 'care coordination tools for clinics', 'com'],
  ['Financial services', 'Capital', 'lending and treasury services for mid-sized businesses', 'com'],
  ['Logistics', 'Logistics', 'freight visibility and routing', 'com'],
  ['Manufacturing', 'Industries', 'precision components for industrial equipment', 'com'],
  ['Biotechnology', 'Bio', 'lab automation for drug discovery', 'com'],
  ['Retail', 'Commerce', 'omnichannel commerce software', 'co'],
  ['Telecommunications', 'Networks', 'private wireless networks', 'net'],
  ['Energy', 'Energy', 'grid-scale battery storage', 'com'],
  ['Artificial intelligence', 'AI', 'AI assistants for customer support', 'ai'],
  ['Marketing services', 'Media', 'performance marketing campaigns', 'com'],
] as const;

const PLACES = [
  ['San Francisco', 'US'], ['New York', 'US'], ['Austin', 'US'], ['Boston', 'US'], ['Chicago', 'US'], ['Seattle', 'US'], ['Denver', 'US'],
  ['Toronto', 'CA'], ['London', 'GB'], ['Manchester', 'GB'], ['Berlin', 'DE'], ['Munich', 'DE'], ['Paris', 'FR'], ['Amsterdam', 'NL'],
  ['Stockholm', 'SE'], ['Dublin', 'IE'], ['Sydney', 'AU'], ['Singapore', 'SG'],
] as const;

// Area codes that exist, so that every number is valid in its country's plan (as the API checks a
// phone number written to it): North American ones, and per other country its capital's trunk
// with the length of its subscriber numbers.
const NANP_AREAS = [201, 206, 212, 213, 214, 305, 312, 404, 415, 416, 503, 512, 514, 604, 617, 646, 702, 718, 773, 917] as const;
const TRUNKS: Record<string, readonly [code: string, digits: number]> = {
  DE: ['+4930', 8], FR: ['+331', 8], NL: ['+3120', 7], SE: ['+468', 7], IE: ['+3531', 7], AU: ['+6129', 7], SG: ['+656', 7],
};

/**
 * North American and UK numbers come from the ranges reserved for fiction (555-01xx, 020 7946 0xxx).
 * In E.164, as the API stores every phone number.
 */
function phoneNumber(rng: ReturnType<typeof prng>, country: string): string {
  if (country === 'US' || country === 'CA') return `+1${NANP_AREAS[rng.int(201, 989) % NANP_AREAS.length]}55501${String(rng.int(0, 99)).padStart(2, '0')}`;
  if (country === 'GB') return `+442079460${String(rng.int(0, 999)).padStart(3, '0')}`;
  const [code, digits] = TRUNKS[country];
  return code + `${rng.int(20, 99)}${rng.int(100, 999)}${String(rng.int(0, 9999)).padStart(4, '0')}`.slice(0, digits);
}

const FIRST_NAMES = [
  'Ada', 'Grace', 'Alan', 'Katherine', 'Linus', 'Margaret', 'Tim', 'Barbara', 'Dennis', 'Frances', 'Ken', 'Radia', 'Guido', 'Hedy',
  'Donald', 'Sophie', 'James', 'Priya', 'Mateo', 'Chloé', 'Kenji', 'Amara', 'Lukas', 'Ingrid', 'Omar', 'Zoë', 'Rafael', 'Mei',
  'Daniel', 'Fatima', 'Noah', 'Elena', 'Samuel', 'Aisha', 'Jonas', 'Lucía', 'Ethan', 'Nadia', 'Oliver', 'Hannah', 'Arjun', 'Freya',
  'Marcus', 'Yuki', 'Leo', 'Camille', 'Tomás', 'Sara', 'Victor', 'Isabel', 'Kwame', 'Astrid', 'Diego', 'Leila', 'Felix', 'Maya',
] as const;

const LAST_NAMES = [
  'Lovelace', 'Hopper', 'Turing', 'Johnson', 'Torvalds', 'Hamilton', 'Berners-Lee', 'Liskov', 'Ritchie', 'Allen', 'Thompson', 'Perlman',
  'van Rossum', 'Lamarr', 'Knuth', 'Wilson', 'Gosling', 'Raman', 'García', 'Dubois', 'Tanaka', 'Okafor', 'Schmidt', 'Lindqvist',
  'Haddad', 'Murphy', 'Costa', 'Chen', 'Cohen', 'Rahman', 'Walker', 'Petrova', 'Adeyemi', 'Khan', 'Becker', 'Fernández', 'Brooks',
  'Novak', 'Hughes', 'Weber', 'Patel', 'Nilsson', 'Reid', 'Sato', 'Moreau', 'Alvarez', 'Kowalski', 'Mensah', 'Larsen', 'Romero',
  "O'Brien", 'Kim', 'Silva', 'Nakamura',
] as const;

type Role = readonly [title: string, seniority: string, department: string];

const SENIOR_ROLES: readonly Role[] = [
  ['Chief Executive Officer', 'c_suite', 'executive'], ['Chief Technology Officer', 'c_suite', 'engineering'],
  ['Chief Financial Officer', 'c_suite', 'finance'], ['Chief Revenue Officer', 'c_suite', 'sales'],
  ['VP Engineering', 'vp', 'engineering'], ['VP Sales', 'vp', 'sales'], ['VP Marketing', 'vp', 'marketing'], ['VP Operations', 'vp', 'operations'],
  ['Head of Revenue Operations', 'head', 'operations'], ['Head of Data', 'head', 'data'], ['Head of Procurement', 'head', 'operations'],
  ['Director of Engineering', 'director', 'engineering'], ['Director of IT', 'director', 'it'], ['Director of Demand Generation', 'director', 'marketing'],
  ['Director of Sales', 'director', 'sales'], ['Director of Finance', 'director', 'finance'],
];

const OTHER_ROLES: readonly Role[] = [
  ['Engineering Manager', 'manager', 'engineering'], ['Senior Software Engineer', 'senior', 'engineering'], ['Data Engineer', 'senior', 'data'],
  ['Data Scientist', 'senior', 'data'], ['Product Manager', 'manager', 'product'], ['Product Designer', 'senior', 'product'],
  ['Marketing Manager', 'manager', 'marketing'], ['Growth Marketer', 'entry', 'marketing'], ['Account Executive', 'senior', 'sales'],
  ['Sales Development Representative', 'entry', 'sales'], ['Customer Success Manager', 'manager', 'customer_success'],
  ['Solutions Engineer', 'senior', 'sales'], ['IT Manager', 'manager', 'it'], ['Financial Analyst', 'entry', 'finance'],
  ['Operations Manager', 'manager', 'operations'], ['Talent Acquisition Partner', 'senior', 'human_resources'],
];

const PERSONAL_DOMAINS = ['gmail.com', 'outlook.com', 'proton.me', 'icloud.com'] as const;

export type ListKey = 'accounts' | 'webinar' | 'inbound' | 'suppressions';

export interface SandboxCompany {
  name: string;
  domain: string;
  industry: string;
  employee_count: number;
  annual_revenue: number;
  city: string;
  country: string;
  linkedin_url: string;
  description: string;
  tags: string[];
  age: number;
}

export interface SandboxList {
  key: ListKey;
  name: string;
  type: 'contacts' | 'leads' | 'suppressions';
  description: string;
  age: number;
}

export interface SandboxContact {
  list: ListKey;
  company: number;
  name: string;
  first_name: string;
  last_name: string;
  title: string;
  company_name: string;
  work_email: string;
  email_domain: string;
  personal_email: string | null;
  phone: string | null;
  linkedin_url: string;
  city: string;
  country: string;
  seniority: string;
  department: string;
  tags: string[];
  suppressed: boolean;
  age: number;
}

export interface SandboxStep {
  channel: string;
  delay_days: number;
  subject: string;
  body: string;
}

export interface SandboxCampaign {
  name: string;
  status: 'draft' | 'active';
  channels: string[];
  list: ListKey;
  steps: SandboxStep[];
  schedule: { timezone: string; days: string[]; start_hour: number; end_hour: number };
  age: number;
  /** For a launched campaign: how long ago it was launched. */
  launched_age: number | null;
}

export interface SandboxData {
  companies: SandboxCompany[];
  lists: SandboxList[];
  contacts: SandboxContact[];
  /** Values of the suppression list: e-mail addresses and whole domains. */
  suppressions: Array<{ value: string; kind: 'email' | 'domain'; age: number }>;
  campaigns: SandboxCampaign[];
}

/** Lower-case ASCII for e-mail local parts and URL slugs ("Zoë van Rossum" → "zoe", "vanrossum"). */
const slug = (text: string, join = '') => text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, join).replace(/^-|-$/g, '');

const LISTS: SandboxList[] = [
  { key: 'accounts', name: 'Target accounts: decision makers', type: 'contacts', description: 'Senior buyers at the accounts sales is working this quarter', age: 120 * DAY },
  { key: 'webinar', name: 'Webinar attendees: Q3 product tour', type: 'contacts', description: 'Everyone who joined the September product tour webinar', age: 100 * DAY },
  { key: 'inbound', name: 'Inbound demo requests', type: 'leads', description: 'Demo requests from the website, not yet qualified', age: 95 * DAY },
  { key: 'suppressions', name: 'Do not contact', type: 'suppressions', description: 'Unsubscribes, bounces and accounts legal asked us not to contact', age: 110 * DAY },
];

// How many contacts each list holds; the first list is the audience of the active campaign.
const LIST_SIZES: Array<[ListKey, number]> = [['accounts', 110], ['webinar', 80], ['inbound', 50]];

function generateCompanies(rng: ReturnType<typeof prng>): SandboxCompany[] {
  const stems = [...COMPANY_STEMS];
  const companies: SandboxCompany[] = [];
  for (let i = 0; i < 50; i++) {
    const stem = stems.splice(rng.int(0, stems.length - 1), 1)[0];
    const [industry, word, what, tld] = INDUSTRIES[i % INDUSTRIES.length];
    const [city, country] = rng.pick(PLACES);
    const employees = Math.round(Math.exp(rng.next() * Math.log(20_000 / 25)) * 25);
    const name = `${stem} ${word}`;
    companies.push({
      name,
      domain: `${slug(stem)}${word === 'AI' ? '' : slug(word)}.${tld}`,
      industry,
      employee_count: employees,
      annual_revenue: Math.round((employees * rng.int(120, 420)) / 10) * 10_000,
      city,
      country,
      linkedin_url: `https://www.linkedin.com/company/${slug(name, '-')}`,
      description: `${name} provides ${what}, headquartered in ${city}.`,
      tags: [employees >= 1000 ? 'enterprise' : employees >= 200 ? 'mid-market' : 'smb', ...(rng.chance(0.3) ? ['target-account'] : [])],
      age: rng.int(150, 365) * DAY + rng.int(0, DAY - 1),
    });
  }
  return companies;
}

function generateContacts(rng: ReturnType<typeof prng>, companies: SandboxCompany[]): SandboxContact[] {
  const contacts: SandboxContact[] = [];
  const emails = new Set<string>();
  let index = 0;
  for (const [list, size] of LIST_SIZES) {
    for (let n = 0; n < size; n++, index++) {
      const company = companies[index % companies.length];
      const first = rng.pick(FIRST_NAMES);
      const last = rng.pick(LAST_NAMES);
      const [title, seniority, department] = list === 'accounts' ? rng.pick(SENIOR_ROLES) : rng.pick(rng.chance(0.3) ? SENIOR_ROLES : OTHER_ROLES);
      let email = `${slug(first)}.${slug(last)}@${company.domain}`;
      for (let k = 2; emails.has(email); k++) email = `${slug(first)}.${slug(last)}${k}@${company.domain}`;
      emails.add(email);
      const [city, country] = rng.chance(0.8) ? [company.city, company.country] : rng.pick(PLACES);
      const tags = [
        ...(list === 'webinar' ? ['webinar-q3'] : []),
        ...(list === 'inbound' ? ['inbound'] : []),
        ...(seniority === 'c_suite' || seniority === 'vp' ? ['decision-maker'] : []),
        ...(rng.chance(0.15) ? ['champion'] : []),
        ...(rng.chance(0.25) ? ['newsletter'] : []),
      ];
      contacts.push({
        list,
        company: index % companies.length,
        name: `${first} ${last}`,
        first_name: first,
        last_name: last,
        title,
        company_name: company.name,
        work_email: email,
        email_domain: company.domain,
        personal_email: rng.chance(0.25) ? `${slug(first)}.${slug(last)}${rng.int(10, 99)}@${rng.pick(PERSONAL_DOMAINS)}` : null,
        phone: rng.chance(0.7) ? phoneNumber(rng, country) : null,
        linkedin_url: `https://www.linkedin.com/in/${slug(`${first} ${last}`, '-')}-${rng.int(0x1000, 0xffff).toString(16)}`,
        city,
        country,
        seniority,
        department,
        tags,
        suppressed: false,
        // The campaign's audience predates its launch.
        age: rng.int(list === 'accounts' ? 30 : 1, 90) * DAY + rng.int(0, DAY - 1),
      });
    }
  }
  return contacts;
}

const CAMPAIGNS: SandboxCampaign[] = [
  {
    name: 'Enterprise outbound: Q4 decision makers',
    status: 'active',
    channels: ['email', 'linkedin'],
    list: 'accounts',
    steps: [
      { channel: 'email', delay_days: 0, subject: 'Closing the books faster at {{company}}', body: 'Hi {{first_name}}, teams like yours close the quarter four days sooner with us. Worth a short call next week?' },
      { channel: 'linkedin', delay_days: 3, subject: 'Connection request', body: 'Hi {{first_name}}, I sent you a note about month-end close at {{company}}; happy to connect here.' },
      { channel: 'email', delay_days: 7, subject: 'Re: Closing the books faster at {{company}}', body: 'Hi {{first_name}}, following up with a two-minute case study from a team of your size.' },
    ],
    schedule: { timezone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_hour: 9, end_hour: 17 },
    age: 20 * DAY,
    launched_age: 14 * DAY,
  },
  {
    name: 'Webinar follow-up: Q3 attendees',
    status: 'draft',
    channels: ['email'],
    list: 'webinar',
    steps: [
      { channel: 'email', delay_days: 0, subject: 'The recording and slides from our product tour', body: 'Hi {{first_name}}, thanks for joining. Here are the recording and the slides.' },
      { channel: 'email', delay_days: 4, subject: 'Questions after the product tour?', body: 'Hi {{first_name}}, if anything from the tour applies to {{company}}, I can walk you through it.' },
    ],
    schedule: { timezone: 'Europe/London', days: ['tue', 'wed', 'thu'], start_hour: 10, end_hour: 16 },
    age: 5 * DAY,
    launched_age: null,
  },
];

const SEED = 0x5eed2025;

function generate(): SandboxData {
  const rng = prng(SEED);
  const companies = generateCompanies(rng);
  const contacts = generateContacts(rng, companies);
  // Every contact of one account, plus a few people on each list, asked not to be contacted.
  const suppressedDomain = companies[3].domain;
  const suppressedEmails = [10, 41, 77, 120, 166, 215].map((i) => contacts[i].work_email);
  const suppressions = [
    { value: suppressedDomain, kind: 'domain' as const, age: 100 * DAY },
    ...suppressedEmails.map((value, i) => ({ value, kind: 'email' as const, age: (60 - i * 7) * DAY })),
  ];
  const blocked = new Set(suppressions.map((s) => s.value));
  const isBlocked = (email: string | null) => email !== null && (blocked.has(email) || blocked.has(email.slice(email.indexOf('@') + 1)));
  for (const c of contacts) c.suppressed = isBlocked(c.work_email) || isBlocked(c.personal_email);
  return { companies, lists: LISTS, contacts, suppressions, campaigns: CAMPAIGNS };
}

let cached: SandboxData | undefined;

/** The sandbox data set (the same for every organization). */
export function sandboxData(): SandboxData {
  cached ??= generate();
  return cached;
}
