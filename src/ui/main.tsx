/**
 * The dirid web console (docs/console.md): log in, then list, search, add,
 * edit, rename, check and delete IdP references, and link users to them or
 * unlink them. Forms come from the server's `schema` command, so every
 * option of idp_add and idp_mod appears with the server's label and help.
 * Edit controls show only when the server's authorization lets the session
 * write; the client secret is a write-only field, never filled in.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { allowed, call, first, SESSION_ENDED, KERBEROS_RETRY_PAUSES_MS, loginKerberos, loginPassword, logout, RpcError, type CommandSpec, type ParamSpec, type Schema, type Wire } from './api.js';

type Entry = Record<string, Wire>;

/**
 * The provider templates' own fields (docs/conventions.md, Provider templates):
 * which of organization and base_url each template builds its endpoints from.
 * The schema lists the providers and describes the fields; this says which go with which.
 */
const TEMPLATE_FIELDS: Record<string, string[]> = {
  keycloak: ['organization', 'base_url'],
  github: [],
  google: [],
  microsoft: ['organization'],
  okta: ['organization', 'base_url'],
};
const TEMPLATE_ONLY = ['organization', 'base_url'];
/** options the forms leave to the CLI: raw attribute edits and output switches */
const NOT_IN_FORMS = new Set(['setattr', 'addattr', 'delattr', 'all', 'raw', 'rights', 'rename', 'provider']);

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function ErrorNote({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

/** A modal dialog: focus moves into it, Escape (the browser's own) and the Close button close it. */
function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (d && !d.open) d.showModal();
    const onCancel = (ev: Event) => {
      ev.preventDefault();
      onClose();
    };
    d?.addEventListener('cancel', onCancel);
    return () => {
      d?.removeEventListener('cancel', onCancel);
      if (d?.open) d.close();
      // the focus goes back to the button that opened the dialog, once the dialog is gone
      if (opener) setTimeout(() => opener.isConnected && opener.focus(), 0);
    };
  }, []);
  return (
    <dialog ref={ref} aria-label={title}>
      <header class="dialog-head">
        <h2>{title}</h2>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </header>
      {children}
    </dialog>
  );
}

/** The login form; onTouched is called at the user's first input or button. */
function Login({ onDone, onTouched }: { onDone: () => void; onTouched: () => void }) {
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(ev: Event) {
    ev.preventDefault();
    onTouched();
    setBusy(true);
    setError(null);
    try {
      await loginPassword(user, password);
      setPassword('');
      onDone();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }
  async function kerberos() {
    onTouched();
    setError(null);
    if ((await loginKerberos()) === 'ok') onDone();
    else setError('Kerberos login failed: the browser has no ticket for this server, or does not offer it.');
  }
  return (
    <main class="login">
      <h1>dirid console</h1>
      <form onSubmit={submit} aria-label="Log in">
        <label for="login-user">User name</label>
        <input id="login-user" name="user" autocomplete="username" required value={user} onInput={(e) => {
            onTouched();
            setUser(e.currentTarget.value);
          }} />
        <label for="login-password">Password</label>
        <input id="login-password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => {
            onTouched();
            setPassword(e.currentTarget.value);
          }} />
        <button type="submit" disabled={busy}>
          Log in
        </button>
        <button type="button" class="secondary" onClick={kerberos}>
          Log in with Kerberos
        </button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}

function inputType(p: ParamSpec): 'password' | 'url' | 'number' | 'text' {
  if (p.type === 'password') return 'password';
  if (p.type === 'url') return 'url';
  if (p.type === 'int') return 'number';
  return 'text';
}

/** One option of a command as a labelled form field. */
function Field({ p, value, onInput, disabled }: { p: ParamSpec; value: string; onInput: (v: string) => void; disabled?: boolean }) {
  const id = `f-${p.name}`;
  const help = `${id}-help`;
  const choices = p.type === 'bool' ? ['TRUE', 'FALSE'] : p.type === 'enum' ? p.values : undefined;
  if (choices) {
    return (
      <div class="field">
        <label for={id}>{p.label}</label>
        <select id={id} name={p.name} value={value} aria-describedby={help} disabled={disabled} onChange={(e) => onInput(e.currentTarget.value)}>
          {p.required ? null : <option value="">{p.name === 'provider' ? '' : '(not set)'}</option>}
          {choices.map((v) => (
            <option value={v}>{v}</option>
          ))}
        </select>
        <small id={help}>{p.doc}</small>
      </div>
    );
  }
  return (
    <div class="field">
      <label for={id}>
        {p.label}
        {p.required && p.type !== 'password' ? ' (required)' : ''}
      </label>
      <input
        id={id}
        name={p.name}
        type={inputType(p) as 'text'}
        value={value}
        disabled={disabled}
        aria-describedby={help}
        autocomplete={p.type === 'password' ? 'new-password' : 'off'}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <small id={help}>{p.doc}</small>
    </div>
  );
}

/** A field's text as the option's wire value: numbers, booleans and lists as the API takes them; empty removes the value. */
function toWire(o: ParamSpec, v: string): Wire {
  if (o.multivalue) return v === '' ? [] : [v];
  if (v === '') return '';
  if (o.type === 'int') return Number(v);
  if (o.type === 'bool') return v === 'TRUE';
  return v;
}

function keyOf(schema: Schema, param: string): string {
  const idp = schema.objects.find((o) => o.name === 'idp');
  return idp?.fields.find((f) => f.param === param)?.key ?? param;
}

/** Add (entry null) or edit an IdP reference: every option the server's schema lists for idp_add / idp_mod. */
function IdpForm({ schema, entry, onSaved, onClose }: { schema: Schema; entry: Entry | null; onSaved: (name: string) => void; onClose: () => void }) {
  const cmd = schema.commands.find((c) => c.name === (entry ? 'idp_mod' : 'idp_add')) as CommandSpec;
  const providerParam = cmd.options.find((o) => o.name === 'provider');
  const initial: Record<string, string> = {};
  for (const o of cmd.options) {
    if (NOT_IN_FORMS.has(o.name) || o.type === 'password') continue;
    const v = entry ? first(entry, keyOf(schema, o.name)) : '';
    initial[o.name] = o.type === 'bool' ? v.toUpperCase() : v;
  }
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [provider, setProvider] = useState(providerParam?.values?.[0] ?? 'oidc');
  const [name, setName] = useState(entry ? first(entry, 'cn') : '');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const templated = !entry && provider !== 'oidc' && provider in TEMPLATE_FIELDS;
  const fromTemplate = templated || (entry !== null && first(entry, 'diridpprovider') in TEMPLATE_FIELDS);
  const shown = cmd.options.filter((o) => {
    if (NOT_IN_FORMS.has(o.name)) return false;
    if (TEMPLATE_ONLY.includes(o.name)) return templated && TEMPLATE_FIELDS[provider]!.includes(o.name);
    // a template builds every endpoint (the URL options); the server refuses them on such a reference
    if (fromTemplate && o.type === 'url') return false;
    return true;
  });
  async function submit(ev: Event) {
    ev.preventDefault();
    setBusy(true);
    setError(null);
    const options: Record<string, Wire> = {};
    for (const o of shown) {
      if (o.type === 'password') {
        if (secret !== '') options[o.name] = secret;
        continue;
      }
      const v = (values[o.name] ?? '').trim();
      // a new reference sends what is filled in; an edit sends what changed (an emptied field removes the value)
      if (entry ? v !== (initial[o.name] ?? '') : v !== '') options[o.name] = toWire(o, v);
    }
    const oldName = entry ? first(entry, 'cn') : '';
    if (!entry && providerParam) options.provider = provider;
    if (entry && name.trim() !== oldName) options.rename = name.trim();
    try {
      await call(entry ? 'idp_mod' : 'idp_add', [entry ? oldName : name.trim()], options);
      setSecret('');
      onSaved(entry && typeof options.rename === 'string' ? options.rename : name.trim());
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <Dialog title={entry ? `Edit IdP reference "${first(entry, 'cn')}"` : 'Add an IdP reference'} onClose={onClose}>
      <form onSubmit={submit} class="idp-form" aria-label={entry ? 'Edit IdP reference' : 'Add IdP reference'}>
        <div class="field">
          <label for="f-name">{entry ? 'Name (change it to rename)' : 'IdP reference name (required)'}</label>
          <input id="f-name" name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        {!entry && providerParam ? <Field p={{ ...providerParam, required: true }} value={provider} onInput={setProvider} /> : null}
        {entry && first(entry, 'diridpprovider') ? (
          <p class="note">
            Provider template: <strong>{first(entry, 'diridpprovider')}</strong>
            {first(entry, 'diridporg') ? `, organization ${first(entry, 'diridporg')}` : ''}
            {first(entry, 'diridpbaseurl') ? `, base URL ${first(entry, 'diridpbaseurl')}` : ''}. The template builds the endpoints; the
            provider and its fields are fixed once added.
          </p>
        ) : null}
        {templated ? <p class="note">The {provider} template builds the endpoints{TEMPLATE_FIELDS[provider]!.length > 0 ? ' from the fields below' : ''}.</p> : null}
        {shown.map((o) =>
          o.type === 'password' ? (
            <Field p={{ ...o, label: entry ? `${o.label} (leave empty to keep)` : values.client_auth === 'private_key_jwt' ? `${o.label} (not used with private_key_jwt)` : `${o.label} (required)` }} value={secret} onInput={setSecret} />
          ) : (
            <Field p={o} value={values[o.name] ?? ''} onInput={(v) => setValues({ ...values, [o.name]: v })} />
          ),
        )}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {entry ? 'Save' : 'Add'}
          </button>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** The users linked to one reference, linking one more and unlinking. */
function Links({ name, canLink, onClose }: { name: string; canLink: boolean; onClose: () => void }) {
  const [users, setUsers] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [login, setLogin] = useState('');
  const [sub, setSub] = useState('');
  async function load() {
    try {
      const r = await call('user_find', [], { idp: name });
      setUsers(r.result as Entry[]);
    } catch (e) {
      setError(message(e));
    }
  }
  useEffect(() => {
    void load();
  }, [name]);
  async function link(ev: Event) {
    ev.preventDefault();
    setError(null);
    try {
      await call('user_mod', [login.trim()], { user_auth_type: ['idp'], idp: name, idp_user_id: sub.trim() });
      setLogin('');
      setSub('');
      await load();
    } catch (e) {
      setError(message(e));
    }
  }
  async function unlink(user: string) {
    setError(null);
    try {
      // the specification's unlink: back to password, both link attributes removed
      await call('user_mod', [user], { user_auth_type: ['password'], delattr: ['dirIdpConfigLink', 'dirIdpSub'] });
      await load();
    } catch (e) {
      setError(message(e));
    }
  }
  return (
    <Dialog title={`Users linked to "${name}"`} onClose={onClose}>
      {users === null ? <p>Loading…</p> : users.length === 0 ? <p class="note">No user is linked to this reference.</p> : null}
      {users && users.length > 0 ? (
        <table class="links">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">IdP user ID</th>
              {canLink ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr>
                <td>{first(u, 'uid')}</td>
                <td>{first(u, 'diridpsub')}</td>
                {canLink ? (
                  <td>
                    <button type="button" class="secondary" onClick={() => unlink(first(u, 'uid'))} aria-label={`Unlink ${first(u, 'uid')}`}>
                      Unlink
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {canLink ? (
        <form onSubmit={link} class="link-form" aria-label="Link a user">
          <h3>Link a user</h3>
          <div class="field">
            <label for="link-user">User login</label>
            <input id="link-user" required value={login} onInput={(e) => setLogin(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="link-sub">IdP user ID</label>
            <input id="link-sub" required value={sub} onInput={(e) => setSub(e.currentTarget.value)} />
            <small>The user's identifier at the IdP (the value of the reference's user ID attribute).</small>
          </div>
          <button type="submit">Link</button>
        </form>
      ) : null}
      <ErrorNote error={error} />
    </Dialog>
  );
}

interface CheckLine {
  check: string;
  status: string;
  message?: string;
}

function Check({ name, onClose }: { name: string; onClose: () => void }) {
  const [lines, setLines] = useState<CheckLine[] | null>(null);
  const [summary, setSummary] = useState('');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    call('idp_check', [name])
      .then((r) => {
        setLines(r.result as unknown as CheckLine[]);
        setSummary(r.summary ?? '');
      })
      .catch((e: unknown) => setError(message(e)));
  }, [name]);
  return (
    <Dialog title={`Check of "${name}"`} onClose={onClose}>
      {lines === null && !error ? <p aria-live="polite">Checking…</p> : null}
      {lines ? (
        <>
          <ul class="checks">
            {lines.map((l) => (
              <li class={`check-${l.status.toLowerCase()}`}>
                <span class="status">{l.status}</span> <strong>{l.check}</strong>
                {l.message ? `: ${l.message}` : ''}
              </li>
            ))}
          </ul>
          <p class="summary" aria-live="polite">
            {summary}
          </p>
        </>
      ) : null}
      <ErrorNote error={error} />
    </Dialog>
  );
}

function ConfirmDelete({ name, onDone, onClose }: { name: string; onDone: () => void; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [linked, setLinked] = useState<string[]>([]);
  async function remove() {
    setError(null);
    try {
      await call('idp_del', [name]);
      onDone();
    } catch (e) {
      setError(message(e));
      // say why: the users whose links keep the reference
      try {
        const r = await call('user_find', [], { idp: name });
        setLinked((r.result as Entry[]).map((u) => first(u, 'uid')));
      } catch {
        setLinked([]);
      }
    }
  }
  return (
    <Dialog title={`Delete "${name}"?`} onClose={onClose}>
      <p>The IdP reference "{name}" will be deleted. Users linked to it keep it from being deleted.</p>
      <ErrorNote error={error} />
      {linked.length > 0 ? <p class="note">Linked users: {linked.join(', ')}. Unlink them first.</p> : null}
      <div class="actions">
        <button type="button" class="danger" onClick={remove}>
          Delete
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}

type Modal = { kind: 'add' } | { kind: 'edit'; entry: Entry } | { kind: 'links'; name: string } | { kind: 'check'; name: string } | { kind: 'delete'; name: string } | null;

interface Session {
  principal: string;
  versions: string;
  schema: Schema;
  canManage: boolean;
  canLink: boolean;
}

function Console({ session, onLogout }: { session: Session; onLogout: () => void }) {
  const [criteria, setCriteria] = useState('');
  const [entries, setEntries] = useState<Entry[]>([]);
  const [summary, setSummary] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [modal, setModal] = useState<Modal>(null);
  const [selected, setSelected] = useState<string | null>(null);
  async function load(c = criteria) {
    setError(null);
    try {
      const r = await call('idp_find', c.trim() ? [c.trim()] : [], {});
      setEntries(r.result as Entry[]);
      setSummary(r.summary ?? '');
    } catch (e) {
      setError(message(e));
    }
  }
  useEffect(() => {
    void load('');
  }, []);
  const close = () => setModal(null);
  const sel = entries.find((e) => first(e, 'cn') === selected) ?? null;
  const idpObject = session.schema.objects.find((o) => o.name === 'idp');
  return (
    <>
      <header class="top">
        <h1>dirid console</h1>
        <p class="who">
          Logged in as <strong>{session.principal}</strong>
          {session.canManage ? '' : ' (read only)'}{' '}
          <button type="button" class="logout" onClick={onLogout}>
            Log out
          </button>
        </p>
      </header>
      <main>
        <section aria-labelledby="idp-title">
          <div class="bar">
            <h2 id="idp-title">{idpObject?.label ?? 'IdP references'}</h2>
            {session.canManage ? (
              <button type="button" onClick={() => setModal({ kind: 'add' })}>
                Add IdP reference
              </button>
            ) : null}
          </div>
          <form
            class="search"
            role="search"
            onSubmit={(ev) => {
              ev.preventDefault();
              void load();
            }}
          >
            <label for="search">Search</label>
            <input id="search" type="search" value={criteria} onInput={(e) => setCriteria(e.currentTarget.value)} />
            <button type="submit" class="secondary">
              Search
            </button>
          </form>
          <p class="summary" aria-live="polite">
            {summary}
          </p>
          {notice ? (
            <p class="notice" role="status">
              {notice}
            </p>
          ) : null}
          <ErrorNote error={error} />
          <table class="idps">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Provider</th>
                <th scope="col">Client identifier</th>
                <th scope="col">Issuer / token URI</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => {
                const n = first(e, 'cn');
                return (
                  <tr data-idp={n} class={n === selected ? 'selected' : ''}>
                    <td>
                      <button type="button" class="link" onClick={() => setSelected(n === selected ? null : n)} aria-expanded={n === selected}>
                        {n}
                      </button>
                    </td>
                    <td>{first(e, 'diridpprovider') || 'oidc'}</td>
                    <td>{first(e, 'diridpclientid')}</td>
                    <td class="uri">{first(e, 'diridpissuerurl') || first(e, 'diridptokenendpoint')}</td>
                    <td class="row-actions">
                      <button type="button" class="secondary" onClick={() => setModal({ kind: 'links', name: n })} aria-label={`Users linked to ${n}`}>
                        Users
                      </button>
                      {session.canManage ? (
                        <>
                          <button type="button" class="secondary" onClick={() => setModal({ kind: 'edit', entry: e })} aria-label={`Edit ${n}`}>
                            Edit
                          </button>
                          <button type="button" class="secondary" onClick={() => setModal({ kind: 'check', name: n })} aria-label={`Check ${n}`}>
                            Check
                          </button>
                          <button type="button" class="danger" onClick={() => setModal({ kind: 'delete', name: n })} aria-label={`Delete ${n}`}>
                            Delete
                          </button>
                        </>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {sel && idpObject ? (
            <section class="details" aria-label={`Details of ${selected}`}>
              <h3>{selected}</h3>
              <dl>
                {idpObject.fields
                  .filter((f) => first(sel, f.key) !== '')
                  .map((f) => (
                    <>
                      <dt>{f.label}</dt>
                      <dd>{first(sel, f.key)}</dd>
                    </>
                  ))}
              </dl>
            </section>
          ) : null}
        </section>
      </main>
      <footer class="versions">{session.versions}</footer>
      {modal?.kind === 'add' || modal?.kind === 'edit' ? (
        <IdpForm
          schema={session.schema}
          entry={modal.kind === 'edit' ? modal.entry : null}
          onClose={close}
          onSaved={(n) => {
            close();
            setNotice(modal.kind === 'add' ? `Added IdP reference "${n}"` : `Modified IdP reference "${n}"`);
            void load();
          }}
        />
      ) : null}
      {modal?.kind === 'links' ? <Links name={modal.name} canLink={session.canLink} onClose={close} /> : null}
      {modal?.kind === 'check' ? <Check name={modal.name} onClose={close} /> : null}
      {modal?.kind === 'delete' ? (
        <ConfirmDelete
          name={modal.name}
          onClose={close}
          onDone={() => {
            close();
            setNotice(`Deleted IdP reference "${modal.name}"`);
            if (selected === modal.name) setSelected(null);
            void load();
          }}
        />
      ) : null}
    </>
  );
}

async function openSession(): Promise<Session> {
  const ping = await call('ping');
  const schema = (await call('schema')).result as unknown as Schema;
  const [canManage, canLink] = await Promise.all([allowed('idp_check'), allowed('user_mod')]);
  const who = (ping.result as { principal?: string } | null)?.principal ?? '';
  return { principal: who, versions: ping.summary ?? '', schema, canManage, canLink };
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [state, setState] = useState<'starting' | 'login' | 'ready'>('starting');
  const [error, setError] = useState<string | null>(null);
  async function start(tryKerberos: boolean) {
    try {
      setSession(await openSession());
      setState('ready');
      return;
    } catch (e) {
      if (!(e instanceof RpcError && e.name === 'NotAuthenticated')) setError(message(e));
    }
    const kerberos = tryKerberos ? await loginKerberos() : 'refused';
    if (kerberos === 'ok') return start(false);
    setState('login');
    if (kerberos === 'challenged') void askKerberosAgain();
  }
  const ready = useRef(false);
  ready.current = state === 'ready';
  const untouched = useRef(true);
  /** The background attempts of KERBEROS_RETRY_PAUSES_MS, while the login form waits untouched. */
  async function askKerberosAgain() {
    for (const pause of KERBEROS_RETRY_PAUSES_MS) {
      await new Promise((r) => setTimeout(r, pause));
      if (!untouched.current || ready.current) return;
      const answer = await loginKerberos();
      if (answer === 'ok') {
        if (untouched.current && !ready.current) void start(false);
        return;
      }
      if (answer !== 'challenged') return;
    }
  }
  useEffect(() => {
    void start(true);
    // a session that ends (expiry, or the account may no longer log in) leads back to the login form
    const ended = () => {
      if (!ready.current) return;
      setSession(null);
      setState('login');
      setError('The session has ended: log in again.');
    };
    window.addEventListener(SESSION_ENDED, ended);
    return () => window.removeEventListener(SESSION_ENDED, ended);
  }, []);
  if (state === 'starting') return <p class="starting">Connecting…</p>;
  if (state === 'login' || !session)
    return (
      <>
        <ErrorNote error={error} />
        <Login
          onDone={() => {
            setError(null);
            void start(false);
          }}
          onTouched={() => {
            untouched.current = false;
          }}
        />
      </>
    );
  const leave = async () => {
    try {
      await logout();
    } catch (e) {
      setError(message(e));
      return;
    }
    setSession(null);
    setError(null);
    setState('login');
  };
  return (
    <>
      <ErrorNote error={error} />
      <Console session={session} onLogout={() => void leave()} />
    </>
  );
}

render(<App />, document.getElementById('app')!);
