// The built-in methodologies of `POST /v1/pipelines/from-template`. Their stages name only keys of
// the canonical evidence library (checked by test/resources/checklist-pipelines.test.ts).
import type { StageInput } from './checklists.schemas.ts';

export const TEMPLATES = ['meddpicc', 'bant', 'spiced'] as const;
export type TemplateName = (typeof TEMPLATES)[number];

interface Template { name: string; description: string; stages: StageInput[] }

const stage = (name: string, required: string[], recommended: string[], exit: string, email: string, call: string): StageInput => ({
  name, stage_type: 'open', required_elements: required, recommended_elements: recommended, exit_criteria: exit, channel_scripts: { email, call },
});

export const TEMPLATE_DEFINITIONS: Record<TemplateName, Template> = {
  meddpicc: {
    name: 'MEDDPICC',
    description: 'Metrics, Economic buyer, Decision criteria, Decision process, Paper process, Identify pain, Champion, Competition',
    stages: [
      stage('Identify pain', [], ['pain_identified'], 'The buyer names a pain worth solving',
        'Hi {{first_name}}, teams like yours tell us {{pain}} costs them time every week. Is that true for you?', 'Ask what happens if nothing changes this quarter.'),
      stage('Qualify', ['pain_identified'], ['metrics_quantified', 'champion_identified'], 'The pain is quantified and someone inside wants it solved',
        'Following up on our call: could you share how you measure {{pain}} today?', 'Ask who else feels the pain and who would push for a fix.'),
      stage('Build the case', ['pain_identified', 'metrics_quantified', 'champion_identified'], ['decision_criteria_known', 'competition_known'], 'The champion agrees the numbers and the criteria',
        'Attached is the value summary we built with {{champion}}; does it match your numbers?', 'Ask which criteria the decision will be judged on and who else is being considered.'),
      stage('Validate', ['decision_maker_identified', 'decision_criteria_known', 'decision_process_known'], ['competition_known', 'success_criteria_agreed'], 'The economic buyer has seen the case and the process to a decision is mapped',
        'Could we walk {{economic_buyer}} through the case this week?', 'Confirm every step and approver between now and signature.'),
      stage('Negotiate', ['decision_maker_identified', 'decision_process_known', 'procurement_process_known'], ['success_criteria_agreed'], 'Paper process under way with named owners',
        'Here is the order form; who on your side runs legal and security review?', 'Agree the dates of each procurement step.'),
      { name: 'Closed won', stage_type: 'won', required_elements: ['procurement_process_known'], recommended_elements: [], exit_criteria: null, channel_scripts: {} },
      { name: 'Closed lost', stage_type: 'lost', required_elements: [], recommended_elements: ['competition_known'], exit_criteria: null, channel_scripts: {} },
    ],
  },
  bant: {
    name: 'BANT',
    description: 'Budget, Authority, Need, Timeline',
    stages: [
      stage('Need', [], ['need_confirmed', 'pain_identified'], 'The buyer confirms the need',
        'Hi {{first_name}}, are you looking at ways to solve {{pain}} this year?', 'Ask what prompted them to look now.'),
      stage('Budget and authority', ['need_confirmed'], ['budget_confirmed', 'decision_maker_identified'], 'Budget exists and the signer is known',
        'To shape a proposal that fits, could you share the budget range and who signs off?', 'Ask who besides them decides and how budget is approved.'),
      stage('Timeline', ['need_confirmed', 'budget_confirmed', 'decision_maker_identified'], ['timeline_known'], 'A decision date is agreed',
        'When would you need this running, and what happens on that date?', 'Agree a decision date and the steps to it.'),
      stage('Proposal', ['budget_confirmed', 'decision_maker_identified', 'timeline_known'], ['procurement_process_known'], 'The proposal is with the decision maker',
        'Attached is the proposal for {{company}}; shall we review it together?', 'Walk the decision maker through the proposal.'),
      { name: 'Closed won', stage_type: 'won', required_elements: ['budget_confirmed'], recommended_elements: [], exit_criteria: null, channel_scripts: {} },
      { name: 'Closed lost', stage_type: 'lost', required_elements: [], recommended_elements: [], exit_criteria: null, channel_scripts: {} },
    ],
  },
  spiced: {
    name: 'SPICED',
    description: 'Situation, Pain, Impact, Critical event, Decision',
    stages: [
      stage('Situation', [], ['situation_understood'], 'The buyer\'s situation is understood',
        'Hi {{first_name}}, how does your team handle {{process}} today?', 'Ask about their team, tools and goals.'),
      stage('Pain', ['situation_understood'], ['pain_identified'], 'The pain is named by the buyer',
        'You mentioned {{pain}}; how often does it get in the way?', 'Ask what the pain costs them and who feels it.'),
      stage('Impact', ['pain_identified'], ['impact_quantified', 'success_criteria_agreed'], 'The impact is quantified with the buyer',
        'Here is our estimate of what solving {{pain}} is worth to you; does it look right?', 'Agree the numbers and what success looks like.'),
      stage('Critical event', ['pain_identified', 'impact_quantified'], ['critical_event_known', 'timeline_known'], 'A dated event forces the decision',
        'Is there a date by which this has to be solved?', 'Ask what happens if that date is missed.'),
      stage('Decision', ['critical_event_known'], ['decision_maker_identified', 'decision_process_known', 'procurement_process_known'], 'The decision process and its people are known',
        'Who else should be part of the next conversation?', 'Map the decision process with the champion.'),
      { name: 'Closed won', stage_type: 'won', required_elements: ['decision_maker_identified'], recommended_elements: [], exit_criteria: null, channel_scripts: {} },
      { name: 'Closed lost', stage_type: 'lost', required_elements: [], recommended_elements: [], exit_criteria: null, channel_scripts: {} },
    ],
  },
};
