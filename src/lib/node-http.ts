/**
 * node:http without its ES-module facade. On Node 22 and newer, `import … from 'node:http'` builds
 * the facade by reading every export, and three of them (WebSocket, CloseEvent, MessageEvent) are
 * getters that load undici, Node's fetch: on Node 24 that is 2.3 MB more heap and 13 MB more RSS
 * for code rz-auth never runs. Taken from the module itself, the getters stay untouched.
 * Types still come from `import type … from 'node:http'`, which is erased.
 */
export const http = process.getBuiltinModule('node:http');
