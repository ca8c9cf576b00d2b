/**
 * Generated call content: transcripts, analyses and follow-up drafts that read like real ones.
 * Every generator takes its random source, so a call's content repeats for the same seed.
 */
import { hexId, intBetween, pick, type Random } from './rng.js';
import type {
  Analysis,
  CallRecord,
  FollowupDraft,
  Objection,
  Scoring,
  Transcript,
  TranscriptSegment,
} from './types.js';

export const REPS = ['Alex Rivera', 'Morgan Lee', 'Priya Shah', 'Tom Becker'] as const;

const REP_LINES = [
  'Thanks for making the time today. How is the quarter going on your side?',
  'Could you walk me through how your team handles this today?',
  'What happens if nothing changes in the next six months?',
  'Who else would need to weigh in before a decision like this?',
  'Let me share how two similar teams rolled this out in under a month.',
  'If we solved the reporting gap, what would that be worth to you?',
  'Would it help if I put together a short business case for your CFO?',
  'Shall we pencil in a follow-up with your operations lead next week?',
];

const PROSPECT_LINES = [
  'Honestly it is mostly spreadsheets and a lot of copy-pasting.',
  'We looked at a couple of tools last year but nothing stuck.',
  'Budget is tight until the next fiscal year starts.',
  'I would need to loop in our head of IT on the security side.',
  'The timing is not great, we are mid-migration on our CRM.',
  'That sounds useful, but how long does onboarding take?',
  'We already have a contract with another vendor until the summer.',
  'If the numbers work I can take it to the leadership meeting.',
];

const OBJECTIONS: readonly { type: string; text: string }[] = [
  { type: 'pricing', text: 'The price is higher than what we budgeted for this year.' },
  { type: 'timing', text: 'We cannot take on a new rollout before next quarter.' },
  { type: 'competition', text: 'We are already evaluating a competing product.' },
  { type: 'authority', text: 'I am not the one who signs off on this kind of purchase.' },
  { type: 'need', text: 'I am not sure the team really needs another tool.' },
  { type: 'security', text: 'Our security team will want a full review first.' },
];

const NEXT_STEPS = [
  'Send the pricing proposal with the annual discount',
  'Book a technical deep-dive with the IT lead',
  'Share two customer references from the same industry',
  'Prepare a one-page business case for the CFO',
  'Schedule a pilot kickoff for the sales team',
  'Follow up after the budget review meeting',
  'Send the security questionnaire answers',
];

function score(random: Random, base: number): number {
  return Math.max(0, Math.min(100, base + intBetween(random, -18, 18)));
}

export function makeScoring(random: Random): Scoring {
  const base = intBetween(random, 35, 85);
  const rapport = score(random, base);
  const discovery = score(random, base);
  const objection_handling = score(random, base);
  const closing = score(random, base);
  const overall = Math.round((rapport + discovery + objection_handling + closing) / 4);
  return { overall, rapport, discovery, objection_handling, closing };
}

export function makeTranscript(call: CallRecord, random: Random): Transcript {
  const duration = call.durationSeconds ?? 600;
  const rep = pick(random, REPS);
  const count = Math.max(4, Math.min(40, Math.round(duration / 60)));
  const step = duration / count;
  const segments: TranscriptSegment[] = [];
  for (let i = 0; i < count; i++) {
    const repTurn = i % 2 === 0;
    const start = Math.round(i * step);
    segments.push({
      speaker: repTurn ? rep : call.participant.name,
      start_seconds: start,
      end_seconds: Math.max(start + 1, Math.round((i + 1) * step) - 1),
      text: pick(random, repTurn ? REP_LINES : PROSPECT_LINES),
    });
  }
  return { call_id: call.id, language: 'en', segments };
}

export function makeAnalysis(call: CallRecord, random: Random): Analysis {
  const duration = call.durationSeconds ?? 600;
  const scoring = makeScoring(random);
  const objections: Objection[] = [];
  const count = intBetween(random, 0, 4);
  for (let i = 0; i < count; i++) {
    const o = pick(random, OBJECTIONS);
    objections.push({
      type: o.type,
      text: o.text,
      handled: random() < 0.6,
      at_seconds: intBetween(random, 30, Math.max(31, duration - 30)),
    });
  }
  objections.sort((a, b) => a.at_seconds - b.at_seconds);
  const steps = new Set<string>();
  const stepCount = intBetween(random, 1, 3);
  while (steps.size < stepCount) steps.add(pick(random, NEXT_STEPS));
  const who = call.participant.company
    ? `${call.participant.name} (${call.participant.company})`
    : call.participant.name;
  const mood = scoring.overall >= 70 ? 'A strong' : scoring.overall >= 50 ? 'A solid' : 'An uneven';
  const summary =
    `${mood} ${call.methodology} discovery call with ${who}. ` +
    `${objections.length} objection(s) came up; ${objections.filter((o) => o.handled).length} were handled.`;
  return {
    call_id: call.id,
    summary,
    scoring,
    objections,
    next_steps: [...steps],
    methodology: call.methodology,
  };
}

export interface FollowupRequestBody {
  tone?: string;
  recipients?: string[];
  instructions?: string;
}

/** One or two new drafts; `to` is the requested recipients, else the call's participant. */
export function makeFollowupDrafts(
  call: CallRecord,
  request: FollowupRequestBody,
  random: Random,
  nowMs: number,
): FollowupDraft[] {
  const to = request.recipients?.length ? [...request.recipients] : [call.participant.email];
  const firstName = call.participant.name.split(' ')[0] ?? call.participant.name;
  const steps = call.analysis?.next_steps ?? ['Agree on the next meeting'];
  const tone = request.tone ?? 'friendly';
  const count = intBetween(random, 1, 2);
  const drafts: FollowupDraft[] = [];
  for (let i = 0; i < count; i++) {
    const subject =
      i === 0
        ? `Great speaking today${call.participant.company ? `, ${call.participant.company} team` : ''}`
        : `Next steps from our call`;
    const body =
      `Hi ${firstName},\n\nThank you for your time today (${tone} tone). As discussed:\n` +
      steps.map((s) => `- ${s}`).join('\n') +
      (request.instructions ? `\n\nNote: ${request.instructions}` : '') +
      `\n\nBest regards,\n${pick(random, REPS)}`;
    drafts.push({
      id: `fu_${hexId(random, 16)}`,
      subject,
      body,
      to,
      created_at: new Date(nowMs).toISOString(),
    });
  }
  return drafts;
}
