import { Type, type Static } from 'typebox';

export const SandboxResetSchema = Type.Object({
  reset: Type.Literal(true, { description: 'Always true', examples: [true] }),
  lists: Type.Integer({ description: 'Lists in the fresh data set, the suppression list included', examples: [4] }),
  contacts: Type.Integer({ description: 'Contacts in the fresh data set', examples: [240] }),
  companies: Type.Integer({ description: 'Companies in the fresh data set', examples: [50] }),
  campaigns: Type.Integer({ description: 'Campaigns in the fresh data set (one draft, one active)', examples: [2] }),
  deals: Type.Integer({ description: 'Deals in the fresh data set, in the stages of the default pipeline (each with a contact)', examples: [8] }),
  tasks: Type.Integer({ description: 'Tasks in the fresh data set, on sample contacts and deals (some overdue, some completed) and the sequence\'s intro calls', examples: [11] }),
  notes: Type.Integer({ description: 'Notes in the fresh data set, on sample contacts and deals', examples: [6] }),
  products: Type.Integer({ description: 'Products in the fresh data set (one inactive)', examples: [5] }),
  quotes: Type.Integer({ description: 'Quotes in the fresh data set (one sent, on a deal)', examples: [1] }),
  members: Type.Integer({ description: 'Members in the fresh data set (an admin and two members, in three time zones)', examples: [3] }),
  sequences: Type.Integer({ description: 'Sequences in the fresh data set (one live, from the sandbox\'s mailbox, its enrollments in several states: three waiting on their intro-call task, one paused, two finished; nothing due until one is acted on)', examples: [1] }),
  dialer_sessions: Type.Integer({ description: 'Dialer sessions in the fresh data set (one paused, over the inbound demo requests, for Ada as an available agent, from the sandbox\'s number: running it calls through the local driver)', examples: [1] }),
}, { title: 'SandboxReset', description: 'What the test-mode data set now holds' });
export type SandboxReset = Static<typeof SandboxResetSchema>;
