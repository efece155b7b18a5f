/**
 * Create or edit a connector. The fields come from the plugin's definition (GET
 * /connector-plugins/{plugin}/config), grouped as the plugin groups them, plus the
 * keys every connector has (name, tasks.max, and topics for a sink); any other key
 * (converters, transforms) goes in the free-form box, one `key=value` a line. Each
 * change is validated by the worker (PUT /connector-plugins/{plugin}/config/validate)
 * and its errors are shown beside the key they name, so the form checks exactly what
 * the worker would refuse. Saving creates (POST /connectors, refused if the name is
 * taken) or updates (PUT /connectors/{name}/config).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, getJson, request, rest } from '../api.ts';
import type { ConfigInfos, ConfigKeyInfo, PluginInfo } from '../types.ts';

export interface Editing {
  name: string;
  config: Record<string, string>;
}

const VALIDATE_DELAY_MS = 300;

export function ConnectorForm({ editing, saved }: { editing: Editing | null; saved: () => void }) {
  const [plugins, setPlugins] = useState<PluginInfo[]>([]);
  const [plugin, setPlugin] = useState(editing?.config['connector.class'] ?? '');
  const [definitions, setDefinitions] = useState<ConfigKeyInfo[]>([]);
  const [name, setName] = useState(editing?.name ?? '');
  const [values, setValues] = useState<Record<string, string>>(editing?.config ?? {});
  const [extra, setExtra] = useState('');
  const [validation, setValidation] = useState<ConfigInfos | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);

  useEffect(() => {
    getJson<PluginInfo[]>(rest('/connector-plugins')).then(setPlugins, (e: Error) =>
      setMessage({ text: e.message, error: true }),
    );
  }, []);

  useEffect(() => {
    setDefinitions([]);
    if (plugin === '') return;
    getJson<ConfigKeyInfo[]>(rest(`/connector-plugins/${encodeURIComponent(plugin)}/config`)).then(
      setDefinitions,
      (e: Error) => setMessage({ text: e.message, error: true }),
    );
  }, [plugin]);

  const type = plugins.find((p) => p.class === plugin)?.type;
  const shownKeys = useMemo(() => {
    const keys = new Set(['name', 'connector.class', 'tasks.max']);
    if (type === 'sink') keys.add('topics');
    for (const d of definitions) keys.add(d.name);
    return keys;
  }, [definitions, type]);

  // Keys of an edited config that the form has no field for go to the free-form box.
  useEffect(() => {
    if (editing === null || definitions.length === 0) return;
    setExtra(
      Object.entries(editing.config)
        .filter(([k]) => !shownKeys.has(k))
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
  }, [editing, definitions, shownKeys]);

  const config = useMemo(() => {
    const c: Record<string, string> = {};
    for (const [k, v] of Object.entries(values)) if (shownKeys.has(k) && v !== '') c[k] = v;
    for (const line of extra.split('\n')) {
      const at = line.indexOf('=');
      if (at > 0) c[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
    if (plugin !== '') c['connector.class'] = plugin;
    if (name !== '') c.name = name;
    return c;
  }, [values, extra, plugin, name, shownKeys]);

  useEffect(() => {
    if (plugin === '') return;
    const timer = setTimeout(() => {
      request<ConfigInfos>(
        'PUT',
        rest(`/connector-plugins/${encodeURIComponent(plugin)}/config/validate`),
        config,
      ).then(setValidation, (e: Error) => setMessage({ text: e.message, error: true }));
    }, VALIDATE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [plugin, config]);

  const errors = new Map<string, string[]>();
  for (const c of validation?.configs ?? [])
    if (c.value !== null && c.value.errors.length > 0) errors.set(c.value.name, c.value.errors);
  const otherErrors = [...errors].filter(([k]) => !shownKeys.has(k) || k === 'connector.class');

  const save = async (event: Event) => {
    event.preventDefault();
    try {
      if (editing === null) await request('POST', rest('/connectors'), { name, config });
      else await request('PUT', rest(`/connectors/${encodeURIComponent(name)}/config`), config);
      setMessage({ text: `Saved ${name}`, error: false });
      saved();
    } catch (e) {
      setMessage({ text: e instanceof ApiError ? e.message : String(e), error: true });
    }
  };

  const groups = new Map<string, ConfigKeyInfo[]>();
  const fixed = new Set(['name', 'connector.class', 'tasks.max', 'topics']);
  for (const d of [...definitions].sort((a, b) => a.order - b.order)) {
    if (fixed.has(d.name)) continue;
    const g = d.group ?? 'Connector';
    groups.set(g, [...(groups.get(g) ?? []), d]);
  }
  const set = (key: string, value: string) => setValues((v) => ({ ...v, [key]: value }));

  return (
    <form class="connector-form" onSubmit={save} data-testid="connector-form">
      <h2>{editing === null ? 'New connector' : `Edit ${editing.name}`}</h2>
      <label>
        Plugin
        <select
          value={plugin}
          disabled={editing !== null}
          onChange={(e) => setPlugin((e.target as HTMLSelectElement).value)}
        >
          <option value="">Choose a plugin…</option>
          {plugins.map((p) => (
            <option value={p.class} key={p.class}>
              {p.class} ({p.type} {p.version})
            </option>
          ))}
        </select>
      </label>
      <Field
        def={{ name: 'name', display_name: 'Name', required: true, documentation: '' }}
        value={name}
        errors={errors.get('name')}
        disabled={editing !== null}
        onInput={setName}
      />
      {plugin === '' ? null : (
        <>
          <Field
            def={{
              name: 'tasks.max',
              display_name: 'Tasks',
              required: false,
              documentation: 'Most tasks to run',
            }}
            value={values['tasks.max'] ?? ''}
            errors={errors.get('tasks.max')}
            onInput={(v) => set('tasks.max', v)}
          />
          {type === 'sink' ? (
            <Field
              def={{
                name: 'topics',
                display_name: 'Topics',
                required: false,
                documentation: 'Comma-separated topics to read',
              }}
              value={values.topics ?? ''}
              errors={errors.get('topics')}
              onInput={(v) => set('topics', v)}
            />
          ) : null}
          {[...groups].map(([group, defs]) => (
            <fieldset key={group}>
              <legend>{group}</legend>
              {defs.map((d) => (
                <Field
                  key={d.name}
                  def={d}
                  value={values[d.name] ?? ''}
                  errors={errors.get(d.name)}
                  onInput={(v) => set(d.name, v)}
                />
              ))}
            </fieldset>
          ))}
          <label>
            Other keys (key=value, one a line)
            <textarea
              rows={4}
              value={extra}
              onInput={(e) => setExtra((e.target as HTMLTextAreaElement).value)}
            />
          </label>
        </>
      )}
      {otherErrors.length > 0 ? (
        <ul class="error" data-testid="other-errors">
          {otherErrors.map(([k, list]) => (
            <li key={k}>
              {k}: {list.join('; ')}
            </li>
          ))}
        </ul>
      ) : null}
      <p class="muted">
        {validation === null
          ? ''
          : validation.error_count === 0
            ? 'The worker accepts this configuration.'
            : `${validation.error_count} error(s) found by the worker.`}
      </p>
      <button type="submit" disabled={plugin === '' || name === ''}>
        {editing === null ? 'Create' : 'Save'}
      </button>
      {message ? <p class={message.error ? 'error' : 'muted'}>{message.text}</p> : null}
    </form>
  );
}

interface FieldProps {
  def: Pick<ConfigKeyInfo, 'name' | 'display_name' | 'required' | 'documentation'> &
    Partial<ConfigKeyInfo>;
  value: string;
  errors: string[] | undefined;
  disabled?: boolean;
  onInput: (value: string) => void;
}

function Field({ def, value, errors, disabled, onInput }: FieldProps) {
  const secret = def.type === 'PASSWORD';
  const id = `config-${def.name}`;
  const common = {
    id,
    value,
    disabled,
    placeholder: def.default_value ?? '',
    title: def.documentation,
    onInput: (e: Event) => onInput((e.target as HTMLInputElement).value),
  };
  return (
    <label class={errors ? 'field invalid' : 'field'} data-key={def.name} htmlFor={id}>
      <span>
        {def.display_name || def.name}
        {def.required ? ' *' : ''} <code>{def.name}</code>
      </span>
      {secret ? <input type="password" {...common} /> : <input type="text" {...common} />}
      {errors?.map((e) => (
        <span class="error field-error" key={e}>
          {e}
        </span>
      ))}
    </label>
  );
}
