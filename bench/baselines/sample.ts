// The JSON that baselines (a) and (b) answer: one contact in its envelope, the size of a real reply.
import { contactFields } from '../fixtures.ts';

export const SAMPLE_REPLY = JSON.stringify({
  data: {
    id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', list_id: 'lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', ...contactFields(7),
    company_id: null, personal_email: null, linkedin_url: null, suppressed: false, created_at: 1767225600, updated_at: 1767225600,
  },
});

export const port = (): number => Number(process.env.PORT ?? 8080);
