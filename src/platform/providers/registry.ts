// Providers: the services outside that a kind of work goes through (an SMTP server for e-mail, an
// SMS gateway, next a calendar, a model). Each kind is one interface (its driver), a real adapter per
// provider, and a `local` driver that reaches nothing outside and records what it would have done.
// Which driver a call gets: test mode always the local one (test-mode keys never reach a person);
// live mode the organization's connection of the kind (connections.ts), else the operator's default
// from the environment, else 503 `provider_not_configured` naming both ways to configure one.
import type { TSchema } from 'typebox';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../errors.ts';
import { selectIn } from '../resource/tenancy.ts';
import type { Scope } from '../scope.ts';
import { defaultConnection, openConnection, type OpenConnection } from './connections.ts';

export interface ProviderAdapter<D> {
  /** What a connection of this provider holds in `settings`, and in its sealed `credentials`. */
  settings: TSchema;
  credentials: TSchema;
  /** The driver of `connection`, for calls of the tenant `scope` (whose callbacks name it). */
  open(connection: OpenConnection, scope: Scope): D;
}

export interface ProviderKind<D> {
  kind: string;
  /** The kind in a sentence: `No ${noun} provider is configured`. */
  noun: string;
  /** The environment setting that names the operator's default provider of this kind. */
  setting: string;
  /** Real adapters by provider name (`smtp`); `local` is always there besides. */
  adapters: Record<string, ProviderAdapter<D>>;
  local(scope: Scope): D;
  /** The operator's default connection, from the configuration; undefined when none is set. */
  fromConfig(config: Config): OpenConnection | undefined;
}

const kinds = new Map<string, ProviderKind<unknown>>();

export function defineProviderKind<D>(kind: ProviderKind<D>): ProviderKind<D> {
  kinds.set(kind.kind, kind as ProviderKind<unknown>);
  return kind;
}

export const providerKind = (name: string): ProviderKind<unknown> | undefined => kinds.get(name);
export const providerKindNames = (): string[] => [...kinds.keys()];

export interface Resolved<D> {
  driver: D;
  /** `local`, or the real provider's name. */
  provider: string;
  /** The connection used; null for the local driver and the operator's default. */
  connectionId: string | null;
}

export interface ResolveContext {
  db: Kysely<DB>;
  scope: Scope;
  secret: string;
  config: Config;
}

export const notConfigured = (kind: ProviderKind<unknown>) => new AppError('provider_not_configured',
  `No ${kind.noun} provider is configured: create a connection (POST /v1/connections with "kind": "${kind.kind}") or set ${kind.setting}`);

/** The driver a call of `kind` goes through; `connectionId` asks for one connection of the tenant. */
export async function resolveProvider<D>(kind: ProviderKind<D>, ctx: ResolveContext, connectionId?: string | null): Promise<Resolved<D>> {
  if (ctx.scope.mode === 'test') return { driver: kind.local(ctx.scope), provider: 'local', connectionId: null };
  const connection = connectionId
    ? await openConnection(ctx.db, ctx.scope, ctx.secret, connectionId)
    : await defaultConnection(ctx.db, ctx.scope, ctx.secret, kind.kind);
  if (connection && connection.kind === kind.kind) return { driver: driverOf(kind, connection, ctx.scope), provider: connection.provider, connectionId: connection.id };
  const configured = kind.fromConfig(ctx.config);
  if (configured) return { driver: driverOf(kind, configured, ctx.scope), provider: configured.provider, connectionId: null };
  throw notConfigured(kind as ProviderKind<unknown>);
}

// The configuration the operator's defaults are read from where neither a request nor a job is at
// hand (a write's checks): one per process, like the public URL; the app's builders install it.
let installed: Config | undefined;

export function useProviderConfig(config: Config): void {
  installed = config;
}

/**
 * Refuses (503 `provider_not_configured`) what will call `kind` in live mode when nothing could take
 * the call: no connection of the kind and no operator default. Test mode always can (local).
 */
export async function requireProvider(kind: ProviderKind<unknown>, db: Kysely<DB>, scope: Scope): Promise<void> {
  if (scope.mode === 'test' || (installed && kind.fromConfig(installed))) return;
  const connection = await selectIn(db, 'connections', scope).select('id').where('kind', '=', kind.kind).limit(1).executeTakeFirst();
  if (!connection) throw notConfigured(kind);
}

function driverOf<D>(kind: ProviderKind<D>, connection: OpenConnection, scope: Scope): D {
  if (connection.provider === 'local') return kind.local(scope);
  const adapter = kind.adapters[connection.provider];
  if (!adapter) throw new AppError('provider_not_configured', `The ${kind.noun} connection ${connection.id} names provider "${connection.provider}", which this service has no adapter for`);
  return adapter.open(connection, scope);
}
