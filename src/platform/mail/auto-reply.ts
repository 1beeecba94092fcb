// Automatic replies (out-of-office notices, autoresponders, list mail): recorded in the thread but
// never counted as a person's answer, so a sequence does not stop on a vacation notice. The signals,
// strongest first: RFC 3834's `Auto-Submitted` (anything but `no`), the de-facto `X-Autoreply`,
// `X-Autorespond` and `X-Auto-Response-Suppress` headers, `Precedence: auto_reply|bulk|junk`, and
// the subjects mail clients give out-of-office notices.
const OUT_OF_OFFICE = [
  /^\s*(auto(matic)?[ -]?(reply|response)|autoreply|out of (the )?office|ooo\b|away from (the )?office|on vacation|vacation (reply|notice))/i,
  /^\s*(abwesenheitsnotiz|automatische antwort|réponse automatique|absence du bureau|respuesta automática|fuera de la oficina|risposta automatica|fuori sede|afwezigheidsbericht|automatisch antwoord|frånvaro|autosvar|automatisk svar)/i,
];

/** Why `headers` (names lower-case) and `subject` make a message automatic, or null for a person's message. */
export function autoReplyOf(headers: ReadonlyMap<string, string>, subject: string): string | null {
  const submitted = headers.get('auto-submitted')?.trim().toLowerCase();
  if (submitted && !submitted.startsWith('no')) return `auto_submitted:${submitted.split(/[;\s]/)[0]}`;
  if (headers.has('x-autoreply') || headers.has('x-autorespond')) return 'autoresponder';
  const suppress = headers.get('x-auto-response-suppress')?.toLowerCase() ?? '';
  if (/\b(all|oof|autoreply)\b/.test(suppress) && /^\s*(automatic reply|out of office)/i.test(subject)) return 'out_of_office';
  const precedence = headers.get('precedence')?.trim().toLowerCase();
  if (precedence === 'auto_reply') return 'autoresponder';
  if (precedence === 'bulk' || precedence === 'junk') return `precedence:${precedence}`;
  if (OUT_OF_OFFICE.some((pattern) => pattern.test(subject))) return 'out_of_office';
  return null;
}
