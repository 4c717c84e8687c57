// The MCP TypeScript SDK's client against rerankd, for the Go tests
// (serve/mcp_client_test.go, cmd/rerankd/mcp_test.go):
//   node client.cjs http URL [KEY] < steps.json
//   node client.cjs stdio COMMAND [ARG...] < steps.json
// steps.json is [{"tool": NAME, "args": {...}}, ...]. Prints one JSON object:
// {"tools": [{name, description, inputSchema}], "results": [{isError, text,
// structuredContent}]}, or {"connectError": MESSAGE} when the client could
// not connect (a 401, say). A call the server answers with a JSON-RPC
// error instead of a tool result exits 1: that is a protocol failure.
'use strict';
const fs = require('fs');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main() {
  const [mode, target, ...rest] = process.argv.slice(2);
  const steps = JSON.parse(fs.readFileSync(0, 'utf8') || '[]');
  let transport;
  if (mode === 'http') {
    const headers = rest[0] ? { Authorization: 'Bearer ' + rest[0] } : {};
    transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  } else if (mode === 'stdio') {
    // The child's stderr (rerankd's logs) goes to ours: the test shows it on failure.
    transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'inherit' });
  } else {
    throw new Error('mode: want http or stdio, got ' + mode);
  }
  const client = new Client({ name: 'rerankd-test', version: '1' });
  try {
    await client.connect(transport);
  } catch (e) {
    process.stdout.write(JSON.stringify({ connectError: String(e && e.message || e), status: e && e.code }) + '\n');
    return;
  }
  const out = { tools: (await client.listTools()).tools, results: [] };
  for (const s of steps) {
    const r = await client.callTool({ name: s.tool, arguments: s.args });
    const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
    out.results.push({ isError: !!r.isError, text, structuredContent: r.structuredContent ?? null });
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write('client.cjs: ' + (e && e.stack || e) + '\n');
  process.exit(1);
});
