// How a resource's names read in messages and docs. Its own module, so the store and the route
// builders that word their messages need not load the definitions module (define.ts loads them).
export const capitalized = (s: string) => s[0].toUpperCase() + s.slice(1);
const article = (s: string) => (/^[aeiou]/i.test(s) ? 'an' : 'a');
/** `a quote`, `a dialer session` (a name's underscores read as spaces). */
export const withArticle = (s: string) => `${article(s)} ${s.replaceAll('_', ' ')}`;
