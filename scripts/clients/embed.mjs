// Runs real client SDKs, unmodified, against a rerankd server's embedding
// routes and prints what each got as one JSON object on stdout (the Go
// test, cmd/rerankd/clients_test.go, compares it with the server's own
// answers). Usage: node embed.mjs BASE_URL MODEL TEXT... ; the SDKs are
// resolved from NODE_PATH (scripts/setup_clients.sh installs them).
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [base, modelName, ...texts] = process.argv.slice(2);
const roots = (process.env.NODE_PATH || "").split(path.delimiter).filter(Boolean);
if (!base || !modelName || texts.length < 2 || roots.length === 0) {
  console.error("usage: NODE_PATH=... node embed.mjs BASE_URL MODEL TEXT TEXT...");
  process.exit(2);
}
const req = createRequire(path.join(roots[0], "noop.js"));
const load = async (name) => import(pathToFileURL(req.resolve(name)).href);

const out = {};
const attempt = async (name, fn) => {
  try {
    out[name] = await fn();
  } catch (e) {
    out[name] = { error: String((e && e.stack) || e) };
  }
};
const apiKey = "not-needed-by-rerankd";
const v1 = base + "/v1";

// OpenAI's SDK: its default asks for base64 and decodes it; then floats.
const { default: OpenAI } = await load("openai");
const openai = new OpenAI({ apiKey, baseURL: v1, maxRetries: 0 });
await attempt("openai_default", async () => {
  const r = await openai.embeddings.create({ model: modelName, input: texts });
  return { model: r.model, usage: r.usage, vectors: r.data.map((d) => d.embedding), index: r.data.map((d) => d.index) };
});
await attempt("openai_float", async () => {
  const r = await openai.embeddings.create({ model: modelName, input: texts, encoding_format: "float" });
  return { model: r.model, usage: r.usage, vectors: r.data.map((d) => d.embedding) };
});
await attempt("openai_single", async () => {
  const r = await openai.embeddings.create({ model: modelName, input: texts[0] });
  return { vectors: r.data.map((d) => d.embedding) };
});
await attempt("openai_error", async () => {
  try {
    await openai.embeddings.create({ model: modelName, input: [] });
    return { status: 0 };
  } catch (e) {
    return { status: e.status, message: e.message, type: e.type, param: e.param, code: e.code };
  }
});

// LangChain's OpenAIEmbeddings.
const { OpenAIEmbeddings } = await load("@langchain/openai");
await attempt("langchain_documents", async () => {
  const emb = new OpenAIEmbeddings({ model: modelName, apiKey, configuration: { baseURL: v1 }, maxRetries: 0 });
  return { vectors: await emb.embedDocuments(texts) };
});
await attempt("langchain_query", async () => {
  const emb = new OpenAIEmbeddings({ model: modelName, apiKey, configuration: { baseURL: v1 }, maxRetries: 0 });
  return { vectors: [await emb.embedQuery(texts[0])] };
});

// The Vercel AI SDK through its OpenAI-compatible provider.
const ai = await load("ai");
const { createOpenAICompatible } = await load("@ai-sdk/openai-compatible");
const provider = createOpenAICompatible({ name: "rerankd", baseURL: v1, apiKey });
const embModel = provider.embeddingModel ? provider.embeddingModel(modelName) : provider.textEmbeddingModel(modelName);
await attempt("ai_embed", async () => {
  const r = await ai.embed({ model: embModel, value: texts[0], maxRetries: 0 });
  return { vectors: [r.embedding], usage: r.usage };
});
await attempt("ai_embedMany", async () => {
  const r = await ai.embedMany({ model: embModel, values: texts, maxRetries: 0 });
  return { vectors: r.embeddings, usage: r.usage };
});

// Hugging Face's inference client on TEI's /embed, by endpoint URL.
const hf = await load("@huggingface/inference");
await attempt("hf_feature_extraction", async () => {
  const client = new hf.InferenceClient(apiKey, { endpointUrl: base + "/embed" });
  const r = await client.featureExtraction({ inputs: texts });
  return { vectors: r };
});

process.stdout.write(JSON.stringify(out));
