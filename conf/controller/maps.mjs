// The `maps` controller plugin (as Rspamd ships it): look keys up in the maps
// the modules declared. Endpoints: /plugins/maps/list, /plugins/maps/query,
// /plugins/maps/query_specific and /plugins/maps/query_json, all at the normal level.
//
// A controller plugin file exports `plugins`: a table plugin → endpoint → definition, or a
// function of the controller API returning it. A plugin of the same name in
// local.d/controller.{js,mjs,ts} replaces this one whole.

/** Keys looked up in one request; each costs a lookup in every map. */
const MAX_KEYS = 1000;

/** @param {string} s */
function splitList(s) {
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/**
 * @param {Array<{uri: string, alias: string, map: {get(k: string): string | undefined}}>} maps
 * @param {string[]} keys
 * @param {boolean} reportMisses
 */
function lookup(maps, keys, reportMisses) {
  const results = [];
  for (const key of keys.slice(0, MAX_KEYS)) {
    for (const { uri, alias, map } of maps) {
      const value = map.get(key);
      if (value !== undefined) results.push({ map: uri, alias, key, value, hit: true });
      else if (reportMisses) results.push({ map: uri, alias, key, hit: false });
    }
  }
  return { success: results.length > 0, results };
}

/** `value` wins when non-empty, else the comma-separated `values`. */
function keysOf(params) {
  if (params.value) return [params.value];
  if (params.values) return splitList(params.values);
  return [];
}

/** Maps named by URI or alias; the first unknown name, if any. */
function pick(all, names) {
  const chosen = [];
  for (const n of names) {
    const m = all.find((x) => x.uri === n || x.alias === n);
    if (!m) return { unknown: n };
    if (!chosen.includes(m)) chosen.push(m);
  }
  return { chosen };
}

export function plugins(api) {
  return {
    maps: {
      list: {
        enable: false,
        handler(_task, conn) {
          const maps = [];
          const aliases = {};
          for (const { uri, alias } of api.maps.list()) {
            maps.push(uri);
            if (!(alias in aliases)) aliases[alias] = uri;
          }
          conn.send_ucl({ maps, aliases });
        },
      },
      query: {
        enable: false,
        handler(_task, conn, params) {
          const keys = keysOf(params);
          if (keys.length === 0) return conn.send_error(400, 'missing value or values');
          conn.send_ucl(lookup(api.maps.list(), keys, 'report_misses' in params));
        },
      },
      query_specific: {
        enable: false,
        handler(_task, conn, params) {
          const keys = keysOf(params);
          if (keys.length === 0) return conn.send_error(400, 'missing value or values');
          const { chosen, unknown } = pick(api.maps.list(), splitList(params.maps ?? ''));
          if (unknown !== undefined) return conn.send_error(404, `no such map: ${unknown}`);
          conn.send_ucl(lookup(chosen, keys, 'report_misses' in params));
        },
      },
      query_json: {
        enable: false,
        need_task: true,
        handler(task, conn) {
          let body;
          try {
            body = JSON.parse(task.get_content().toString('utf8'));
          } catch (err) {
            return conn.send_error(400, `cannot parse input: ${err.message}`);
          }
          if (typeof body !== 'object' || body === null || Array.isArray(body)) return conn.send_error(400, 'expected a JSON object');
          const { values, maps, report_misses: misses } = body;
          if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) return conn.send_error(400, 'field "values": expected an array of strings');
          if (maps !== undefined && (!Array.isArray(maps) || maps.some((v) => typeof v !== 'string'))) return conn.send_error(400, 'field "maps": expected an array of strings');
          if (misses !== undefined && typeof misses !== 'boolean') return conn.send_error(400, 'field "report_misses": expected a boolean');
          const all = api.maps.list();
          let chosen = all;
          if (maps !== undefined) {
            const p = pick(all, maps);
            if (p.unknown !== undefined) return conn.send_error(400, `no such map: ${p.unknown}`);
            chosen = p.chosen;
          }
          conn.send_ucl(lookup(chosen, values, misses === true));
        },
      },
    },
  };
}
