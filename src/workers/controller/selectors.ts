// The `selectors` controller plugin: /plugins/selectors/list_extractors,
// list_transforms, check_selector and check_message, all privileged as in Rspamd 3.4. Built in
// (Rspamd ships it as rules/controller/selectors.lua); a `selectors` plugin in
// local.d/controller.* replaces it whole, like any other plugin.
//
// check_selector answers 200 either way (`{"success": true}`, or `{"success": false, "error":
// …}` naming the parse error): the web UI asks it on every keystroke and would raise an alert
// for an error status. check_message answers 500 with the parse error for an invalid selector.
// Both answer 404 "missing selector" when the parameter is absent or empty.

import { basename } from 'node:path';
import { checkSelector, compileSelector, isSelectorError, listExtractors, listTransforms, messageTask, type SelectorEnv } from '../../selectors/index.js';
import type { PluginEndpointDef } from '../../config/controller-plugin-types.js';
import type { ControllerContext } from './types.js';
import { clientFromMessage } from '../../engine/received-client.js';

function selectorEnv(ctx: ControllerContext): SelectorEnv {
  return {
    // A selector map is named by the last path component of its first source, or the source itself.
    map: (name) => ctx.engine.maps().named().find(({ uri }) => uri === name || basename(uri) === name)?.map,
  };
}

export function selectorsEndpoints(ctx: ControllerContext): Record<string, PluginEndpointDef> {
  return {
    list_extractors: { enable: true, handler: (_task, conn) => conn.sendUcl(listExtractors()) },
    list_transforms: { enable: true, handler: (_task, conn) => conn.sendUcl(listTransforms()) },
    check_selector: {
      enable: true,
      handler: (_task, conn, params) => {
        if (!params.selector) return conn.sendError(404, 'missing selector');
        const r = checkSelector(params.selector, selectorEnv(ctx));
        conn.sendUcl(r.ok ? { success: true } : { success: false, error: r.error.message });
      },
    },
    check_message: {
      enable: true,
      need_task: true,
      handler: (task, conn, params) => {
        if (!params.selector) return conn.sendError(404, 'missing selector');
        let selector;
        try {
          selector = compileSelector(params.selector, selectorEnv(ctx));
        } catch (err) {
          if (!isSelectorError(err)) throw err;
          return conn.sendError(500, err.message);
        }
        // Rspamd processes the message here as for a scan: a request without an IP gets the top Received's.
        const raw = task.getContent();
        const { meta, parsed } = clientFromMessage(task.meta(), raw);
        const data = selector.flatten(messageTask(raw, meta, undefined, parsed));
        conn.sendUcl(data === undefined ? { success: true } : { success: true, data });
      },
    },
  };
}
