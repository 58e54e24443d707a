// The benchmark server on the official TypeScript SDK's McpServer (stdio).
// Same tools as benchmarks/servers/ours.py: add, echo, cancellation_probe, last_cancellation
// (the cancellation contract is described in mcp_actors/bench/runner.py; timestamps are
// CLOCK_MONOTONIC seconds, which is what process.hrtime measures on Linux, like Python's
// time.monotonic()).
// Install once: npm install --prefix benchmarks/servers/ts
// Run: node benchmarks/servers/ts/server.mjs (stdio) or ... server.mjs --http PORT
// (stateful Streamable HTTP on 127.0.0.1; one McpServer per session, as the SDK requires;
// add --stateless for stateless JSON replies: a server and transport per request, as the
// SDK's stateless example does).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const observed = new Map(); // token -> monotonic seconds; bounded; shared by all sessions
const monotonic = () => Number(process.hrtime.bigint()) / 1e9;

function makeServer() {
  const server = new McpServer({ name: "ts-sdk-bench", version: "1.0.0" });

  server.registerTool(
    "add",
    {
      description: "Add two integers.",
      inputSchema: { a: z.number().int(), b: z.number().int() },
      outputSchema: { result: z.number().int() },
    },
    async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
      structuredContent: { result: a + b },
    }),
  );

  server.registerTool(
    "echo",
    { description: "Return the text unchanged.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );

  server.registerTool(
    "cancellation_probe",
    {
      description: "Report progress 0, wait; if cancelled, record when under token.",
      inputSchema: { token: z.string(), seconds: z.number().optional() },
    },
    async ({ token, seconds }, extra) => {
      // Listen first: the cancellation may come while the progress report is being sent.
      const done = new Promise((resolve) => {
        const timer = setTimeout(
          () => resolve({ content: [{ type: "text", text: "not cancelled" }] }),
          (seconds ?? 30) * 1000,
        );
        extra.signal.addEventListener("abort", () => {
          observed.set(token, monotonic());
          if (observed.size > 1000) observed.delete(observed.keys().next().value);
          clearTimeout(timer);
          resolve({ content: [{ type: "text", text: "cancelled" }] });
        });
      });
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress: 0, message: "started" },
        });
      }
      return await done;
    },
  );

  server.registerTool(
    "last_cancellation",
    {
      description: "When cancellation_probe saw its cancellation, or null.",
      inputSchema: { token: z.string() },
    },
    async ({ token }) => {
      const found = { token, observed: observed.get(token) ?? null };
      return { content: [{ type: "text", text: JSON.stringify(found) }], structuredContent: found };
    },
  );

  return server;
}

const httpAt = process.argv.indexOf("--http");
if (httpAt < 0) {
  await makeServer().connect(new StdioServerTransport());
} else if (process.argv.includes("--stateless")) {
  const http = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks)) : undefined;
      const server = makeServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  http.listen(Number(process.argv[httpAt + 1]), "127.0.0.1");
} else {
  const transports = new Map(); // session id -> transport
  const readBody = (req) =>
    new Promise((resolve, reject) => {
      const chunks = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", () => resolve(chunks.length ? JSON.parse(Buffer.concat(chunks)) : undefined));
      req.on("error", reject);
    });
  const http = createServer(async (req, res) => {
    try {
      const body = req.method === "POST" ? await readBody(req) : undefined;
      const sessionId = req.headers["mcp-session-id"];
      let transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (sessionId || req.method !== "POST" || body?.method !== "initialize") {
          res.writeHead(sessionId ? 404 : 400).end();
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  http.listen(Number(process.argv[httpAt + 1]), "127.0.0.1");
}
