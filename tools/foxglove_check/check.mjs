// Decodes every message of an MCAP file the way Foxglove does, and says which topics would not
// show in Foxglove and why.
//
// The file is read with Foxglove's own MCAP reader (@mcap/core: indexed when the file has a
// summary, sequentially otherwise; chunk CRCs checked; zstd/lz4 through Foxglove's WebAssembly
// decompressors). Each channel gets the decoder Foxglove builds for its encodings:
//   flatbuffer: the schema must be a binary schema (.bfbs) with schema encoding `flatbuffer`;
//     every object of that schema is turned into a message definition, which refuses unions,
//     fixed-size arrays and vectors of vectors/unions/arrays (Foxglove cannot display them), and
//     the schema name must name a table of it; messages decode through flatbuffers_reflection's
//     Parser with default values filled in (Foxglove's "readDefaults").
//   json: no schema or schema encoding `jsonschema`; a non-empty schema must be an object schema
//     whose properties Foxglove can turn into a definition (boolean, string [base64], number,
//     integer, object, array of those, oneOf of numeric consts); messages are JSON.parse'd.
// Other message encodings (ros1, cdr, protobuf) are listed as not checked.
//
// Usage: node check.mjs FILE.mcap [--json]
// Output: one line per topic ("ok      TOPIC (SCHEMA): ..." or "FAILED  TOPIC (SCHEMA): ...");
// with --json a report object on stdout instead (and the first decoded message of each topic).
// Exit status: 0 every message of every checked topic decodes, 1 something does not (or the
// file cannot be read, or it holds no message), 2 wrong usage.
import { open } from "node:fs/promises";

import decompressLz4 from "@foxglove/wasm-lz4";
import * as zstd from "@foxglove/wasm-zstd";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { ByteBuffer } from "flatbuffers";
import { BaseType, Parser, Schema, Table } from "flatbuffers_reflection";

// ---------------------------------------------------------------- FlatBuffers channels

const SCALAR_TYPES = new Set([
  BaseType.UType, BaseType.Bool, BaseType.Byte, BaseType.UByte, BaseType.Short, BaseType.UShort,
  BaseType.Int, BaseType.UInt, BaseType.Long, BaseType.ULong, BaseType.Float, BaseType.Double,
  BaseType.String,
]);
const BAD_VECTOR_ELEMENTS = new Set([BaseType.Vector, BaseType.Union, BaseType.Array, BaseType.None]);

function baseTypeName(t) {
  return BaseType[t] ?? String(t);
}

// The rules Foxglove applies while turning a binary schema into message definitions: any field it
// cannot represent makes the whole channel undecodable, even when the message never uses it.
function checkFlatbufferField(schema, object, field) {
  const where = `${object.name}.${field.name}`;
  if (typeof field.name !== "string") throw new Error(`a field of ${object.name} has no name`);
  const type = field.type;
  const base = type?.baseType;
  const checkEnum = () => {
    if (type.index !== -1 && schema.enums[type.index]?.values == undefined) {
      throw new Error(`field ${where}: its enum (index ${type.index}) has no values in the schema`);
    }
  };
  if (SCALAR_TYPES.has(base)) {
    checkEnum();
    return;
  }
  if (base === BaseType.Vector) {
    if (BAD_VECTOR_ELEMENTS.has(type.element)) {
      throw new Error(`field ${where}: vectors of ${baseTypeName(type.element)} are not supported by Foxglove`);
    }
    if (type.element === BaseType.Obj) {
      if (typeof schema.objects[type.index]?.name !== "string") throw new Error(`field ${where}: unknown element type`);
      return;
    }
    checkEnum();
    return;
  }
  if (base === BaseType.Obj) {
    if (typeof schema.objects[type.index]?.name !== "string") throw new Error(`field ${where}: unknown object type`);
    return;
  }
  // Union, Array (fixed-size arrays in structs), None, anything newer.
  throw new Error(`field ${where} is of type ${baseTypeName(base)}: unions and fixed-size arrays are not supported by Foxglove`);
}

function flatbufferDecoder(channelSchema) {
  if (channelSchema == undefined || channelSchema.encoding !== "flatbuffer") {
    const got = channelSchema == undefined ? "no schema" : `schema encoding '${channelSchema.encoding}'`;
    throw new Error(`message encoding flatbuffer with ${got} is not supported (expected a flatbuffer schema)`);
  }
  const raw = Schema.getRootAsSchema(new ByteBuffer(channelSchema.data));
  const schema = raw.unpack();
  let index = -1;
  for (let i = 0; i < schema.objects.length; ++i) {
    const object = schema.objects[i];
    if (object.name === channelSchema.name) index = i;
    for (const field of object.fields ?? []) checkFlatbufferField(schema, object, field);
  }
  if (index === -1) {
    throw new Error(`type "${channelSchema.name}" is not in the binary schema (its root table is "${schema.rootTable?.name}")`);
  }
  if (schema.objects[index].isStruct) {
    throw new Error(`"${channelSchema.name}" is a struct; a message must be a table`);
  }
  const toObject = new Parser(raw).toObjectLambda(index, true);
  return (data) => {
    const bb = new ByteBuffer(data);
    return toObject(new Table(bb, index, bb.readInt32(bb.position()) + bb.position(), false));
  };
}

// ---------------------------------------------------------------- JSON channels

// Returns a function that post-processes a parsed value (base64 strings become bytes), as
// Foxglove's JSON-schema reader does; throws for what it cannot represent.
function jsonSchemaPostprocess(schema, path) {
  const where = path.length ? path.join(".") : "the root";
  if (schema?.type !== "object") {
    throw new Error(`JSON schema at ${where}: expected "type": "object", got ${JSON.stringify(schema?.type)}`);
  }
  if (schema.properties == undefined || typeof schema.properties !== "object") {
    throw new Error(`JSON schema at ${where}: an object schema needs "properties"`);
  }
  const steps = [];
  for (const [name, field] of Object.entries(schema.properties)) {
    const at = path.concat(name).join(".");
    if (Array.isArray(field.oneOf)) {
      if (!field.oneOf.every((alt) => typeof alt.const === "number")) {
        throw new Error(`JSON schema at ${at}: oneOf alternatives must be numeric constants`);
      }
      continue;
    }
    switch (field.type) {
      case "boolean":
      case "number":
      case "integer":
        break;
      case "string":
        if (field.contentEncoding === "base64") {
          steps.push((value) => {
            if (typeof value[name] === "string") value[name] = new Uint8Array(Buffer.from(value[name], "base64"));
          });
        } else if (field.contentEncoding !== undefined) {
          throw new Error(`JSON schema at ${at}: contentEncoding ${JSON.stringify(field.contentEncoding)} is not supported`);
        }
        break;
      case "object": {
        const inner = jsonSchemaPostprocess(field, path.concat(name));
        steps.push((value) => {
          if (value[name] != undefined && typeof value[name] === "object") inner(value[name]);
        });
        break;
      }
      case "array": {
        const items = field.items ?? {};
        if (items.type === "object") {
          const inner = jsonSchemaPostprocess(items, path.concat(name));
          steps.push((value) => {
            if (Array.isArray(value[name])) value[name].forEach(inner);
          });
        } else if (items.type === "string") {
          if (items.contentEncoding !== undefined) {
            throw new Error(`JSON schema at ${at}: contentEncoding on array items is not supported`);
          }
        } else if (!["boolean", "number", "integer"].includes(items.type)) {
          throw new Error(`JSON schema at ${at}: array items of type ${JSON.stringify(items.type)} are not supported`);
        }
        break;
      }
      default:
        throw new Error(`JSON schema at ${at}: type ${JSON.stringify(field.type)} is not supported`);
    }
  }
  return (value) => {
    for (const step of steps) step(value);
    return value;
  };
}

function jsonDecoder(channelSchema) {
  if (channelSchema != undefined && channelSchema.encoding !== "jsonschema") {
    throw new Error(`message encoding json with schema encoding '${channelSchema.encoding}' is not supported (expected jsonschema or no schema)`);
  }
  const text = new TextDecoder();
  let post = (value) => value;
  if (channelSchema != undefined && channelSchema.data.length > 0) {
    const schema = JSON.parse(text.decode(channelSchema.data));
    if (typeof schema !== "object" || schema === null) {
      throw new Error(`the JSON schema must be a JSON object, got ${typeof schema}`);
    }
    post = jsonSchemaPostprocess(schema, []);
  }
  return (data) => post(JSON.parse(text.decode(data)));
}

// ---------------------------------------------------------------- reading the file

async function decompressHandlers() {
  await zstd.isLoaded;
  await decompressLz4.isLoaded;
  return {
    zstd: (buffer, size) => new Uint8Array(zstd.decompress(buffer, Number(size))),
    lz4: (buffer, size) => new Uint8Array(decompressLz4(buffer, Number(size))),
  };
}

function fileReadable(handle, size) {
  return {
    size: async () => BigInt(size),
    read: async (offset, length) => {
      const out = new Uint8Array(Number(length));
      const { bytesRead } = await handle.read(out, 0, out.length, Number(offset));
      if (bytesRead !== out.length) throw new Error(`short read at offset ${offset}`);
      return out;
    },
  };
}

// Yields {kind: "message"|"channel"|"schema", record} for every message of the file, and notes
// about how it was read.
async function* readFile(path, handlers, notes) {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    let indexed;
    try {
      indexed = await McapIndexedReader.Initialize({ readable: fileReadable(handle, size), decompressHandlers: handlers });
    } catch (err) {
      notes.push(`not readable as an indexed file (${err.message}); read sequentially instead`);
    }
    if (indexed) {
      notes.push("read through its index (as Foxglove opens a complete file)");
      for (const schema of indexed.schemasById.values()) yield { kind: "schema", record: schema };
      for (const channel of indexed.channelsById.values()) yield { kind: "channel", record: channel };
      for await (const message of indexed.readMessages({ validateCrcs: true })) yield { kind: "message", record: message };
      const counts = indexed.statistics?.channelMessageCounts;
      if (counts) yield { kind: "statistics", record: counts };
      return;
    }
    const reader = new McapStreamReader({ decompressHandlers: handlers, validateCrcs: true });
    const buffer = new Uint8Array(size);
    await handle.read(buffer, 0, size, 0);
    reader.append(buffer);
    for (let record; (record = reader.nextRecord()); ) {
      if (record.type === "Schema") yield { kind: "schema", record };
      else if (record.type === "Channel") yield { kind: "channel", record };
      else if (record.type === "Message") yield { kind: "message", record };
    }
    if (!reader.done()) notes.push("the file ends inside a record (truncated): what follows the last complete record is unreadable");
  } finally {
    await handle.close();
  }
}

// ---------------------------------------------------------------- the check

function jsonSafe(value) {
  return JSON.parse(JSON.stringify(value, (_k, v) => {
    if (typeof v === "bigint") return v.toString();
    if (v instanceof Uint8Array) return Array.from(v);
    return v;
  }));
}

async function check(path) {
  const notes = [];
  const schemas = new Map();
  const topics = new Map(); // channel id → state
  const handlers = await decompressHandlers();
  let statistics;
  const stateOf = (channel) => {
    let state = topics.get(channel.id);
    if (state) return state;
    const schema = channel.schemaId === 0 ? undefined : schemas.get(channel.schemaId);
    state = { topic: channel.topic, messageEncoding: channel.messageEncoding, schemaName: schema?.name ?? "",
              schemaEncoding: schema?.encoding ?? "", messages: 0, failed: 0, firstError: "", first: undefined,
              checked: true, channelError: "" };
    try {
      if (channel.schemaId !== 0 && schema == undefined) throw new Error(`schema id ${channel.schemaId} is not in the file`);
      if (channel.messageEncoding === "flatbuffer") state.decode = flatbufferDecoder(schema);
      else if (channel.messageEncoding === "json") state.decode = jsonDecoder(schema);
      else state.checked = false;
    } catch (err) {
      state.channelError = err.message;
    }
    topics.set(channel.id, state);
    return state;
  };
  const channels = new Map();
  for await (const { kind, record } of readFile(path, handlers, notes)) {
    if (kind === "schema") schemas.set(record.id, record);
    else if (kind === "channel") channels.set(record.id, record);
    else if (kind === "statistics") statistics = record;
    else {
      const channel = channels.get(record.channelId);
      if (channel == undefined) throw new Error(`a message refers to channel ${record.channelId}, which the file does not define`);
      const state = stateOf(channel);
      state.messages += 1;
      if (!state.checked) continue;
      if (state.channelError) {
        state.failed += 1;
        continue;
      }
      try {
        const value = state.decode(record.data);
        if (value == null || typeof value !== "object") throw new Error(`decoded to ${value === null ? "null" : typeof value}, not an object`);
        if (state.first === undefined) state.first = value;
      } catch (err) {
        state.failed += 1;
        if (!state.firstError) state.firstError = `message ${state.messages} (log time ${record.logTime}): ${err.message}`;
      }
    }
  }
  if (statistics) {
    for (const [id, state] of topics) {
      const expected = statistics.get(id);
      if (expected !== undefined && BigInt(state.messages) !== expected) {
        state.failed += 1;
        state.firstError ||= `the file's statistics count ${expected} messages, its index yields ${state.messages}`;
      }
    }
  }
  return { notes, topics: [...topics.values()] };
}

function describe(state) {
  const what = `${state.topic} (${state.schemaName || "no schema"}, ${state.messageEncoding})`;
  if (!state.checked) return `skipped ${what}: ${state.messages} messages; this tool does not check ${state.messageEncoding}`;
  if (state.channelError) return `FAILED  ${what}: ${state.messages} messages, none decodes: ${state.channelError}`;
  if (state.failed) return `FAILED  ${what}: ${state.failed} of ${state.messages} messages fail; first: ${state.firstError}`;
  return `ok      ${what}: ${state.messages} messages decode; fields ${Object.keys(state.first).join(", ")}`;
}

async function main(argv) {
  const args = argv.filter((a) => a !== "--json");
  if (args.length !== 1 || args[0].startsWith("-")) {
    console.error("usage: node check.mjs FILE.mcap [--json]");
    return 2;
  }
  const asJson = argv.includes("--json");
  let report;
  try {
    report = await check(args[0]);
  } catch (err) {
    const message = `${args[0]}: cannot read the file: ${err.message}`;
    if (asJson) console.log(JSON.stringify({ file: args[0], ok: false, error: message, notes: [], topics: [] }));
    else console.log(`FAILED  ${message}`);
    return 1;
  }
  const checked = report.topics.filter((t) => t.checked);
  const failures = checked.filter((t) => t.failed || t.channelError);
  const ok = failures.length === 0 && checked.some((t) => t.messages > 0);
  if (asJson) {
    console.log(JSON.stringify(jsonSafe({
      file: args[0], ok, notes: report.notes,
      topics: report.topics.map(({ decode: _d, ...t }) => t),
    })));
  } else {
    for (const note of report.notes) console.log(`note    ${note}`);
    for (const state of report.topics) console.log(describe(state));
    if (!checked.length) console.log(`FAILED  ${args[0]}: no flatbuffer or json messages to check`);
    const total = checked.reduce((n, t) => n + t.messages, 0);
    console.log(`${ok ? "ok" : "FAILED"}: ${checked.length - failures.length} of ${checked.length} topics, ${total} messages`);
  }
  return ok ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
