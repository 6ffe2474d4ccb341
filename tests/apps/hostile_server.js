// A hostile MCP stdio server for the apps' confinement and failure tests (node, no packages).
// argv[2] is its tool list: "probe" (tools that try things and say what they got), or a bad list:
// "badnames", "dups", "badschema", "many", "redos", or "garbage" (a broken answer to initialize). Any other argv is ignored (a test puts a marker
// there to find the process). Each start appends a line to $HOME/starts.
"use strict";
const fs = require("fs");
const net = require("net");
const http = require("http");
const os = require("os");

const list = process.argv[2] ?? "probe";
try {
  fs.appendFileSync(`${process.env.HOME}/starts`, `${process.pid}\n`);
} catch { /* a home it cannot write is a fact the probe tool reports */ }

const any = { type: "object" };
const PROBES = [
  "read",
  "write",
  "connect",
  "proxy",
  "facts",
  "write_facts",
  "fill",
  "echo",
  "crash",
  "hang",
  "garbage",
  "flood_stderr",
  "flood_stdout",
];
function tools() {
  const tool = (name, inputSchema = any) => ({
    name,
    description: `the ${name} tool`,
    inputSchema,
  });
  if (list === "badnames") {
    return [tool("fine"), tool("9lives"), tool("-dash"), tool("x".repeat(70)), tool("a.b/c")];
  }
  if (list === "dups") return [tool("fine"), tool("get-env"), tool("getEnv")];
  if (list === "badschema") {
    return [
      tool("fine"),
      tool("broken", { type: "object", properties: { a: { type: "nonsense" } } }),
    ];
  }
  if (list === "many") return Array.from({ length: 1001 }, (_, i) => tool(`tool_${i}`));
  // An input schema whose pattern backtracks exponentially on "aaaa…!".
  if (list === "redos") {
    return [
      tool("echo"),
      tool("match", {
        type: "object",
        properties: { s: { type: "string", pattern: "^(a+)+$" } },
        required: ["s"],
      }),
    ];
  }
  return PROBES.map((name) => tool(name));
}

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}
const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });
const failed = (error) => ({ failed: error.code ?? error.message });

function tryRead(path) {
  try {
    const stat = fs.statSync(path);
    return stat.isDirectory()
      ? { read: fs.readdirSync(path) }
      : { read: fs.readFileSync(path, "utf8") };
  } catch (error) {
    return failed(error);
  }
}

function tryConnect(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 3000 });
    socket.on("connect", () => (socket.destroy(), resolve({ connected: true })));
    socket.on("timeout", () => (socket.destroy(), resolve({ failed: "timeout" })));
    socket.on("error", (error) => resolve(failed(error)));
  });
}

// CONNECT through the app's proxy, then a plain GET / over the tunnel.
function tryProxy(target) {
  return new Promise((resolve) => {
    const request = http.request({
      host: "127.0.0.1",
      port: 3128,
      method: "CONNECT",
      path: target,
    });
    request.on("connect", (response, socket) => {
      if (response.statusCode !== 200) {
        return (socket.destroy(), resolve({ status: response.statusCode }));
      }
      let body = "";
      socket.on("data", (chunk) => (body += chunk));
      socket.on("end", () => resolve({ status: 200, body }));
      socket.on("error", (error) => resolve(failed(error)));
      socket.write(`GET / HTTP/1.1\r\nHost: ${target}\r\nConnection: close\r\n\r\n`);
    });
    request.on("error", (error) => resolve(failed(error)));
    request.end();
  });
}

function facts() {
  const home = process.env.HOME;
  const files = {};
  for (const name of fs.readdirSync(home)) {
    const stat = fs.statSync(`${home}/${name}`);
    files[name] = {
      mode: stat.mode & 0o777,
      uid: stat.uid,
      text: stat.isFile() && name !== "starts" ? tryRead(`${home}/${name}`).read ?? null : null,
    };
  }
  let net = [];
  try {
    net = fs.readdirSync("/sys/class/net");
  } catch (error) {
    net = failed(error);
  }
  return {
    uid: process.getuid(),
    gid: process.getgid(),
    pid: process.pid,
    argv: process.argv,
    env: process.env,
    interfaces: Object.keys(os.networkInterfaces()),
    sys_class_net: net,
    files,
  };
}

async function call(name, args) {
  if (name === "read") return tryRead(args.path);
  if (name === "write") {
    try {
      fs.writeFileSync(args.path, args.text ?? "written");
      return { written: true };
    } catch (error) {
      return failed(error);
    }
  }
  if (name === "connect") return await tryConnect(args.host, args.port);
  if (name === "proxy") return await tryProxy(args.target);
  if (name === "fill") {
    // Writes `bytes` to `path` a MiB at a time: how far it got, and what stopped it.
    const chunk = Buffer.alloc(1 << 20, 120);
    let wrote = 0;
    try {
      const fd = fs.openSync(args.path, "w");
      try {
        while (wrote < args.bytes) wrote += fs.writeSync(fd, chunk);
      } finally {
        fs.closeSync(fd);
      }
      return { wrote };
    } catch (error) {
      return { wrote, ...failed(error) };
    }
  }
  if (name === "facts") return facts();
  if (name === "write_facts") {
    fs.writeFileSync(args.path, JSON.stringify(facts()));
    return { written: true };
  }
  if (name === "crash") process.exit(3);
  if (name === "hang") return new Promise(() => {});
  if (name === "garbage") {
    process.stdout.write("this is not JSON-RPC\n");
    return new Promise(() => {});
  }
  if (name === "flood_stderr") {
    // Its lines hold the value of its key `env` (a vault value, which the log must not).
    const line = `flood ${process.env[args.env] ?? ""} ${"e".repeat(200)}\n`;
    for (let i = 0; i < (args.lines ?? 20000); i++) process.stderr.write(line);
    process.stderr.write("flood done\n");
    return { flooded: true };
  }
  if (name === "flood_stdout") {
    const chunk = "x".repeat(1 << 20);
    const more = () => process.stdout.write(chunk, more);
    more();
    return new Promise(() => {});
  }
  return { echo: args };
}

let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (line.trim() !== "") handle(JSON.parse(line));
  }
});

async function handle(message) {
  const { id, method, params } = message;
  if (id === undefined) return; // a notification
  if (method === "initialize" && list === "garbage") {
    return process.stdout.write(`{"jsonrpc": "2.0", "id": ${id}, "resul\n`);
  }
  if (method === "initialize") {
    return send({
      id,
      result: {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "1.0.0" },
      },
    });
  }
  if (method === "tools/list") return send({ id, result: { tools: tools() } });
  if (method === "tools/call") {
    return send({ id, result: text(await call(params.name, params.arguments ?? {})) });
  }
  if (method === "ping") return send({ id, result: {} });
  send({ id, error: { code: -32601, message: `no method ${method}` } });
}
