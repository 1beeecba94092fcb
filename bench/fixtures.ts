// Deterministic, realistic contact data for the benchmark. One title in a hundred contains
// "quantum", so `?title=quantum` matches about 1% of an organization's contacts.
const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken', 'Radia', 'Tim', 'Sophie', 'Linus', 'Hedy', 'Dennis'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'McCarthy', 'Hamilton', 'Thompson', 'Perlman', 'Berners-Lee', 'Wilson', 'Torvalds', 'Lamarr', 'Ritchie'];
const TITLES = [
  'VP Engineering', 'Head of Sales', 'Account Executive', 'Chief Revenue Officer', 'Marketing Manager', 'Software Engineer',
  'Data Analyst', 'Customer Success Lead', 'Product Manager', 'Director of Operations', 'Sales Development Rep', 'CTO',
  'Finance Director', 'Growth Marketer', 'Solutions Architect', 'Recruiter', 'Office Manager', 'Chief Executive Officer',
];
export const RARE_TITLE = 'Quantum Research Lead';
export const RARE_SUBSTRING = 'quantum';
/**
 * The pieces of RARE_TITLE (four characters or more, no space at either end) that no other title
 * contains: each selects exactly the contacts RARE_SUBSTRING selects, as the uncached title
 * searches of scenario 4u ask for them (`search`, `arch l`, `quantum re`, …).
 */
export const RARE_PIECES: readonly string[] = (() => {
  const rare = RARE_TITLE.toLowerCase();
  const pieces: string[] = [];
  for (let a = 0; a < rare.length; a++) {
    for (let b = a + 4; b <= rare.length; b++) {
      const piece = rare.slice(a, b);
      if (piece.trim() === piece && !TITLES.some((t) => t.toLowerCase().includes(piece))) pieces.push(piece);
    }
  }
  return pieces;
})();
/**
 * Scenario 19's words: 200 pieces of the titles (four to eight letters, as typed into a search box:
 * `engineer`, `xecu`, `ales`, …) that each occur in one or two of them (those in two first), so that each matches 5.5–11% of an
 * organization's contacts: 7.6% on average, and 6.7% with the scenario's `created_after`.
 */
export const TITLE_WORDS: readonly string[] = (() => {
  const titles = TITLES.map((t) => t.toLowerCase());
  const pieces = new Set<string>();
  for (const t of titles) {
    for (let a = 0; a < t.length; a++) {
      for (let b = a + 4; b <= Math.min(t.length, a + 8); b++) if (/^[a-z]+$/.test(t.slice(a, b))) pieces.add(t.slice(a, b));
    }
  }
  const holders = (p: string) => titles.filter((t) => t.includes(p)).length;
  // Those in two titles first, then those in one, each in alphabetical order.
  return [...pieces].filter((p) => holders(p) <= 2).sort((x, y) => holders(y) - holders(x) || (x < y ? -1 : 1)).slice(0, 200);
})();
/** Values of the `segment` custom field of the batch assert scenario; `gold` is one record in four. */
export const SEGMENTS = ['gold', 'silver', 'bronze', 'none'];
const COMPANIES = ['Analytical Engines', 'Bletchley Systems', 'Cobol Works', 'Semaphore Labs', 'Clu Software', 'TeX Press', 'Apollo Guidance', 'Unix Room'];
const CITIES = [['London', 'GB'], ['Paris', 'FR'], ['Berlin', 'DE'], ['New York', 'US'], ['Toronto', 'CA'], ['Tokyo', 'JP']];
const SENIORITY = ['entry', 'senior', 'manager', 'director', 'vp', 'c_suite'];
const DEPARTMENTS = ['engineering', 'sales', 'marketing', 'finance', 'operations'];

export interface ContactFields {
  name: string;
  first_name: string;
  last_name: string;
  title: string;
  company: string;
  work_email: string;
  phone: string;
  city: string;
  country: string;
  seniority: string;
  department: string;
  tags: string[];
}

/** The i-th contact of an organization: same input, same contact. */
export function contactFields(i: number): ContactFields {
  const first = FIRST[i % FIRST.length];
  const last = LAST[Math.floor(i / FIRST.length) % LAST.length];
  const company = COMPANIES[i % COMPANIES.length];
  const [city, country] = CITIES[i % CITIES.length];
  return {
    name: `${first} ${last}`,
    first_name: first,
    last_name: last,
    title: i % 100 === 0 ? RARE_TITLE : TITLES[i % TITLES.length],
    company,
    work_email: `${first}.${last}${i}@${company.toLowerCase().replace(/ /g, '')}${i % 50}.example`.toLowerCase(),
    phone: `+44 20 7946 ${String(i % 10_000).padStart(4, '0')}`,
    city,
    country,
    seniority: SENIORITY[i % SENIORITY.length],
    department: DEPARTMENTS[i % DEPARTMENTS.length],
    tags: i % 10 === 0 ? ['vip'] : [],
  };
}

const CURRENCIES = ['USD', 'USD', 'USD', 'EUR', 'GBP'];
const SOURCES = ['inbound', 'outbound', 'referral', 'partner'];

export interface DealFields {
  name: string;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  /** The deal's own probability (one deal in four), else null: it follows its stage's. */
  probability: number | null;
  owner: string;
  source: string;
}

/** The i-th deal of an organization, in three currencies: same input, same deal. */
export function dealFields(i: number): DealFields {
  return {
    name: `${COMPANIES[i % COMPANIES.length]} – ${(i % 90) + 10} seats`,
    amount: (((i * 7919) % 500) + 1) * 100_000,
    currency: CURRENCIES[i % CURRENCIES.length],
    probability: i % 4 === 0 ? (i * 37) % 101 : null,
    owner: `rep${i % 25}@example.com`,
    source: SOURCES[i % SOURCES.length],
  };
}
