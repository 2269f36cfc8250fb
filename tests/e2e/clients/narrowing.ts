// Type-checked (tsc --strict) against the types openapi-typescript generates from openapi.json into ./api.d.ts:
// a client tells deployToChat's and manageBackup's answers apart by their const field, with no cast.
import type { operations } from "./api";

type Answer<Op extends keyof operations, Status extends number> = operations[Op]["responses"] extends Record<
  Status,
  { content: { "application/json": infer Body } }
>
  ? Body
  : never;

export function describeDeployment(answer: Answer<"deployToChat", 200>): string {
  switch (answer.status) {
    case "planned":
      return `plan: ${answer.plan.length} steps, ${answer.warnings.length} warnings`; // a DryRun
    case "exported":
      return `the live guild: ${answer.config.roles?.length ?? 0} roles`; // an export
    case "imported": // an import: of a native template (its `code`), or of backup data (its `format`)
      return "code" in answer.source
        ? `template ${answer.source.code}: ${answer.config.name}`
        : `${answer.source.format} data: ${answer.config.name}`;
    default:
      return `${answer.kind} ${answer.deployment_id} is ${answer.status}, code ${answer.deployment_code ?? "none"}`;
  }
}

export function describeQueued(answer: Answer<"deployToChat", 202>): string {
  return `${answer.kind} queued as ${answer.deployment_id} (${answer.generation.guild_name})`;
}

// Every answer of 200 by its `action`, with no default: a new answer without its own `action` fails to compile.
export function backupIds(answer: Answer<"manageBackup", 200>): string[] {
  switch (answer.action) {
    case "list":
      return answer.backups.map((backup) => backup.backup_id);
    case "get":
      return [answer.data.backup_id, ...Object.keys(answer.data.backup_data)];
    case "delete":
      return [answer.data.backup_id];
    case "schedule": // the backup its last run stored, if any
      return answer.schedule.last_result?.backup_id ? [answer.schedule.last_result.backup_id] : [];
    case "unschedule": {
      const none: null = answer.schedule;
      return none ?? [];
    }
    case "diff":
      return answer.members.map((member) => member.user_id);
    case "restore":
      return [answer.plan_id];
    case "info":
      return answer.backup_id === null ? [] : [answer.backup_id];
    case "cancel": // a restore made through the bot, cancelled
      return [answer.deployment_id];
  }
}

export function createdId(answer: Answer<"manageBackup", 201>): string {
  return answer.data.backup_id;
}

export function unnarrowed(answer: Answer<"deployToChat", 200>): number {
  // @ts-expect-error: only a plan has `plan`; the answer must be narrowed by `status` first
  return answer.plan.length;
}
