// Generate real Vercel AI SDK traces (its own OpenTelemetry integration) with ground truth.
//
// `generateText` from the `ai` package, with two `tool()`s and `stopWhen: stepCountIs(5)`, over
// `@ai-sdk/openai`'s Chat Completions model (`openai.chat(...)`) pointed at the scripted
// OpenAI-compatible server (`../scripted_openai.py`, started here as a child process on
// 127.0.0.1). Tracing is the AI SDK's own: since AI SDK 7 its OpenTelemetry spans come from
// `@ai-sdk/otel`, registered as the docs tell users to (`registerTelemetry(new OpenTelemetry(...))`),
// here with the tracer of an OpenTelemetry SDK `BasicTracerProvider` whose `SimpleSpanProcessor`
// hands the finished spans to an exporter that keeps them; they are written as OTLP/JSON with
// `@opentelemetry/otlp-transformer`'s `JsonTraceSerializer` (ids as lower-case hex).
//
// The ground truth is recorded by this program: the arguments each tool's execute() receives,
// its result or thrown error, the tool call ids it is given, the model's call order (from the
// returned steps) and the text generateText returns. Nothing is read back from the trace. The
// multi-turn run passes the first turn's `response.messages` plus the new user message to the
// second call, and both calls carry the same runtime context `sessionId`, included in telemetry.
//
// Run: `npm ci && node generate.mjs` (in this folder).

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { createOpenAI } from "@ai-sdk/openai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { generateText, registerTelemetry, stepCountIs, tool } from "ai";
import { z } from "zod";

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const version = (name) => JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")).version;
const PRODUCER = `ai==${version("ai")} + @ai-sdk/otel==${version("@ai-sdk/otel")} (OpenTelemetry, GenAI conventions)`
  + ` + @ai-sdk/openai==${version("@ai-sdk/openai")}`;

// --- the spans, kept and written as OTLP/JSON -------------------------------------------------

class OtlpJsonCollector {
  spans = [];
  export(spans, resultCallback) {
    this.spans.push(...spans);
    resultCallback({ code: 0 }); // ExportResultCode.SUCCESS
  }
  shutdown() { return Promise.resolve(); }
  forceFlush() { return Promise.resolve(); }
  take() {
    const spans = this.spans;
    this.spans = [];
    return spans;
  }
  // One request per trace (in order of first span end): a JSON document for one trace, JSON lines for several.
  write(path) {
    const byTrace = new Map();
    for (const span of this.take()) {
      const id = span.spanContext().traceId;
      if (!byTrace.has(id)) byTrace.set(id, []);
      byTrace.get(id).push(span);
    }
    const requests = [...byTrace.values()].map(
      (group) => JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(group))));
    for (const request of requests) {
      const span = request.resourceSpans[0].scopeSpans[0].spans[0];
      if (!/^[0-9a-f]{32}$/.test(span.traceId)) throw new Error(`traceId not hex: ${span.traceId}`);
    }
    writeFileSync(path, requests.length === 1
      ? JSON.stringify(requests[0], null, 1) + "\n"
      : requests.map((r) => JSON.stringify(r) + "\n").join(""));
  }
}

// --- the weather agent's tools, recording the ground truth ------------------------------------

const WEATHER = { Paris: 18.0, London: 11.0, Tokyo: 24.0, Berlin: 15.0 };
let executed = [];

async function record(name, args, toolCallId, body) {
  const entry = { tool_name: name, args: structuredClone(args), tool_call_id: toolCallId };
  try {
    entry.result = body();
    return entry.result;
  } catch (error) {
    entry.error = `${error.name}: ${error.message}`;
    throw error;
  } finally {
    executed.push(entry);
  }
}

const tools = {
  get_weather: tool({
    description: 'Get the current weather for a city, e.g. "Paris".',
    inputSchema: z.object({ city: z.string() }),
    execute: async (args, { toolCallId }) => record("get_weather", args, toolCallId, () => {
      if (!(args.city in WEATHER)) throw new Error(`unknown city: ${args.city}`);
      return { city: args.city, temp_c: WEATHER[args.city] };
    }),
  }),
  celsius_to_fahrenheit: tool({
    description: "Convert a temperature from degrees Celsius to degrees Fahrenheit.",
    inputSchema: z.object({ celsius: z.number() }),
    execute: async (args, { toolCallId }) => record("celsius_to_fahrenheit", args, toolCallId,
      () => Math.round((args.celsius * 9 / 5 + 32) * 10) / 10),
  }),
};

// one turn's ground truth: the executed calls in the order the model asked for them
function turnTruth(prompt, result) {
  const asked = result.steps.flatMap((step) => step.toolCalls.map((call) => call.toolCallId));
  const detail = asked.map((id) => executed.find((c) => c.tool_call_id === id)).filter(Boolean);
  detail.push(...executed.filter((c) => !detail.includes(c))); // anything not asked (should be nothing)
  executed = [];
  return {
    user_prompt: prompt,
    expected_tool_trajectory: detail.map((c) => ({ tool_name: c.tool_name, args: c.args })),
    tool_calls_detail: detail,
    final_response: result.text,
  };
}

// --- the scripted server ----------------------------------------------------------------------

async function startServer() {
  const child = spawn("python3", [join(HERE, "..", "scripted_openai.py")], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const match = /^PORT (\d+)$/.exec(line.trim());
    if (match) return { child, baseURL: `http://127.0.0.1:${match[1]}/v1` };
  }
  throw new Error("scripted server did not start");
}

// --- main -------------------------------------------------------------------------------------

const collector = new OtlpJsonCollector();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "corpus-vercel-ai-sdk-weather" }),
  spanProcessors: [new SimpleSpanProcessor(collector)],
});
// runtimeContext: true records the runtime context the calls include in telemetry (the session id)
registerTelemetry(new OpenTelemetry({ tracer: provider.getTracer("ai"), runtimeContext: true }));

const { child, baseURL } = await startServer();
try {
  const openai = createOpenAI({ baseURL, apiKey: "x" });
  const model = openai.chat("gpt-4o-mini");
  const runs = [
    ["run1_sequential", ["What's the weather in Paris in Fahrenheit?"]],
    ["run2_parallel", ["What's the weather in London and Tokyo?"]],
    ["run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]],
    ["run4_failing_tool", ["What's the weather in Atlantis?"]],
  ];
  for (const [name, prompts] of runs) {
    collector.take();
    const turns = [];
    let messages = [];
    for (const prompt of prompts) {
      messages = [...messages, { role: "user", content: prompt }];
      const result = await generateText({
        model,
        system: "You are a weather assistant. Use the tools to answer.",
        messages,
        tools,
        stopWhen: stepCountIs(5),
        runtimeContext: { sessionId: `corpus-${name}` },
        telemetry: { isEnabled: true, functionId: "weather_agent", includeRuntimeContext: { sessionId: true } },
      });
      turns.push(turnTruth(prompt, result));
      messages = [...messages, ...result.response.messages];
    }
    collector.write(join(HERE, `${name}.otlp.json`));
    let truth = turns.length === 1 ? turns[0] : { turns };
    truth = { ...truth, producer: PRODUCER };
    if (turns.length > 1) {
      truth.conversation_note = "two generateText calls, the second given the first's messages, response.messages and the new "
        + "user message; both with runtimeContext { sessionId: 'corpus-run3_multi_turn' } included in telemetry; "
        + "each call is its own trace (JSON lines)";
    }
    writeFileSync(join(HERE, `${name}.ground_truth.json`), JSON.stringify(truth, null, 2) + "\n");
    console.log(name, JSON.stringify(truth).slice(0, 300));
  }
} finally {
  child.kill();
  await provider.shutdown();
}
