// Action names: the wire spellings (`add header`) and the aliases configs and rules may use
// (`add_header`, `accept`), normalised in one place for the engine, modules and plugins.

const ALIASES: Readonly<Record<string, string>> = {
  add_header: 'add header',
  rewrite_subject: 'rewrite subject',
  soft_reject: 'soft reject',
  no_action: 'no action',
  accept: 'no action',
};

/** The wire spelling of an action name; names without an alias (custom actions) as given. */
export function normaliseActionName(name: string): string {
  return Object.hasOwn(ALIASES, name) ? ALIASES[name]! : name;
}
