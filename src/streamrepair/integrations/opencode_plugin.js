// streamrepair plugin for OpenCode: repairs tool-call arguments before the tool runs.
//
// Written by `streamrepair install opencode`; see docs/integrations/opencode.md.
// One long-lived `streamrepair serve opencode` helper per OpenCode process answers over
// JSON lines on stdio. The plugin restarts it if it dies (at most MAX_RESTARTS times) and
// passes arguments through untouched whenever it is unavailable, slow or confused: a
// repair layer must never be the reason a tool call fails.
//
// Checked with OpenCode 1.18.33 and `tsc --checkJs` against @opencode-ai/plugin's types.
// The tools' JSON Schemas come from OpenCode itself (client.tool.list: exactly the
// schemas sent to the model), asked for once per model from chat.params, never during
// plugin start-up (awaiting the client there deadlocks OpenCode).
//
// streamrepair-plugin: v1
import { spawn } from "node:child_process"

const COMMAND = ["streamrepair", "serve", "opencode"]
const MAX_RESTARTS = 3
const MAX_SILENT_ANSWERS = 3 // consecutive timeouts before a stuck helper is replaced
/** @type {(name: string, fallback: number) => number} */
const milliseconds = (name, fallback) => {
  const value = Number(process.env[name])
  return Number.isFinite(value) && value > 0 ? value : fallback
}
const STARTUP_TIMEOUT_MS = milliseconds("STREAMREPAIR_OPENCODE_STARTUP_MS", 20000)
const TIMEOUT_MS = milliseconds("STREAMREPAIR_OPENCODE_TIMEOUT_MS", 5000)
// The helper's stderr would draw over OpenCode's terminal UI; shown only when debugging.
const HELPER_STDERR = process.env.STREAMREPAIR_OPENCODE_DEBUG ? "inherit" : "ignore"
const MAX_REQUEST_CHARS = 32 * 1024 * 1024
const MAX_PENDING_NOTES = 1000
const MAX_SCHEMAS = 512
const MAX_LISTED_MODELS = 64
const TOOL_LIST_TIMEOUT_MS = 2000

/** @type {(v: unknown) => v is Record<string, any>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

function helperCommand() {
  const override = process.env.STREAMREPAIR_OPENCODE_COMMAND
  if (override) {
    try {
      const parsed = JSON.parse(override)
      if (Array.isArray(parsed) && parsed.length > 0 && parsed.every((p) => typeof p === "string")) {
        return parsed
      }
    } catch {}
    console.error("[streamrepair] STREAMREPAIR_OPENCODE_COMMAND is not a JSON array of strings; ignored")
  }
  return COMMAND
}

class Helper {
  constructor() {
    this.child = null
    this.buffer = ""
    this.nextId = 1
    this.pending = new Map()
    this.starts = 0
    this.silent = 0
    this.answered = false
    this.schemas = new Map()
  }

  start() {
    if (this.child !== null) return true
    if (this.starts > MAX_RESTARTS) return false
    this.starts += 1
    this.answered = false
    const [file, ...args] = helperCommand()
    let child
    try {
      child = spawn(file, args, { stdio: ["pipe", "pipe", HELPER_STDERR], windowsHide: true })
    } catch (error) {
      this.gone(`cannot start ${file}: ${error instanceof Error ? error.message : error}`)
      return false
    }
    this.child = child
    this.buffer = ""
    child.on("error", (error) => this.gone(`helper error: ${error.message}`, child))
    child.on("exit", (code, signal) => this.gone(`helper exited (${signal ?? code})`, child))
    child.stdin.on("error", () => {})
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk) => this.receive(chunk))
    // Never keep OpenCode alive for the helper's sake. The pipes are sockets at run time;
    // their declared types (Writable, Readable) have no unref.
    const stdin = /** @type {import("node:net").Socket} */ (child.stdin)
    const stdout = /** @type {import("node:net").Socket} */ (child.stdout)
    child.unref()
    stdin.unref?.()
    stdout.unref?.()
    for (const [tool, schema] of this.schemas) this.send({ op: "schema", tool, schema })
    return true
  }

  /** @param {string} why @param {import("node:child_process").ChildProcess | null} [child] */
  gone(why, child = this.child) {
    if (child !== this.child) return
    this.child = null
    for (const finish of this.pending.values()) finish(null)
    this.pending.clear()
    const last = this.starts > MAX_RESTARTS
    console.error(`[streamrepair] ${why}${last ? "; passing tool calls through from now on" : ""}`)
  }

  /** @param {string} chunk */
  receive(chunk) {
    this.buffer += chunk
    let newline
    while ((newline = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, newline)
      this.buffer = this.buffer.slice(newline + 1)
      let reply
      try {
        reply = JSON.parse(line)
      } catch {
        continue
      }
      const finish = isObject(reply) ? this.pending.get(reply.id) : undefined
      if (finish) {
        this.answered = true
        this.silent = 0
        this.pending.delete(reply.id)
        finish(reply)
      }
    }
  }

  /** @param {Record<string, unknown>} message */
  send(message) {
    if (this.child === null) return false
    let line
    try {
      line = JSON.stringify(message)
    } catch {
      return false
    }
    if (line.length > MAX_REQUEST_CHARS) return false
    try {
      this.child.stdin.write(line + "\n")
      return true
    } catch {
      return false
    }
  }

  /**
   * The helper's reply, or null (unavailable, too slow, or the request could not be sent).
   * @param {Record<string, unknown>} message
   * @returns {Promise<any>}
   */
  request(message) {
    if (!this.start()) return Promise.resolve(null)
    const id = this.nextId++
    return new Promise((resolve) => {
      const wait = this.answered ? TIMEOUT_MS : STARTUP_TIMEOUT_MS
      const timer = setTimeout(() => {
        this.pending.delete(id)
        resolve(null)
        this.silent += 1
        if (this.silent >= MAX_SILENT_ANSWERS && this.child !== null) {
          this.silent = 0
          this.child.kill()
        }
      }, wait)
      this.pending.set(id, (/** @type {any} */ reply) => {
        clearTimeout(timer)
        resolve(reply)
      })
      if (!this.send({ ...message, id })) {
        clearTimeout(timer)
        this.pending.delete(id)
        resolve(null)
      }
    })
  }

  /**
   * Fire and forget (telemetry, schemas); only to a helper that is already running.
   * @param {Record<string, unknown>} message
   */
  notify(message) {
    if (this.child !== null) this.send({ ...message, id: null })
  }

  /** @param {string} tool @param {unknown} schema */
  rememberSchema(tool, schema) {
    if (!this.schemas.has(tool) && this.schemas.size >= MAX_SCHEMAS) return
    this.schemas.set(tool, schema)
    this.notify({ op: "schema", tool, schema })
  }
}

/** @param {unknown} model @param {any} [provider] @returns {string} */
function modelName(model, provider) {
  if (typeof model === "string") return model
  if (!isObject(model)) return ""
  const id = model.id ?? model.modelID
  if (typeof id !== "string") return ""
  const owner = model.providerID ?? provider?.info?.id ?? provider?.id
  return typeof owner === "string" && owner && !id.startsWith(owner + "/") ? `${owner}/${id}` : id
}

/** @param {unknown} value */
function isJsonSchema(value) {
  if (!isObject(value) || "_def" in value || "_zod" in value) return false
  return typeof value.type === "string" || isObject(value.properties)
}

/**
 * Prepends the note to what the model reads: the text output of a built-in or plugin
 * tool, or (an MCP tool's result is {content: [...]}) a first text part.
 * @param {unknown} output @param {string} note
 */
function addNote(output, note) {
  if (!isObject(output)) return
  if (typeof output.output === "string" || !Array.isArray(output.content)) {
    const text = typeof output.output === "string" ? output.output : ""
    output.output = text ? `${note}\n\n${text}` : note
  } else {
    output.content.unshift({ type: "text", text: note })
  }
}

/**
 * `tool.definition`'s output: at run time (OpenCode 1.18.33) it also carries `jsonSchema`,
 * which @opencode-ai/plugin's types do not declare.
 * @typedef {{ description: string, parameters: any, jsonSchema?: any }} ToolDefinitionOutput
 */

/** @type {import("@opencode-ai/plugin").Plugin} */
export const StreamRepairPlugin = async (input) => {
  const helper = new Helper()
  const notes = new Map()
  const models = new Map()
  const client = input?.client
  const listed = new Set()

  /** @type {(sessionID: unknown, model: unknown, provider?: unknown) => void} */
  const rememberModel = (sessionID, model, provider) => {
    const name = modelName(model, provider)
    if (typeof sessionID !== "string" || !name) return
    models.set(sessionID, name)
    helper.notify({ op: "model", sessionID, model: name })
  }

  // The JSON Schemas OpenCode sends this model (built-in and plugin tools; MCP tools are
  // not listed), once per provider/model, bounded in time.
  /** @param {any} model */
  const learnTools = async (model) => {
    const provider = model?.providerID
    const id = model?.id ?? model?.modelID
    if (typeof provider !== "string" || typeof id !== "string") return
    const key = `${provider}/${id}`
    if (listed.has(key) || listed.size >= MAX_LISTED_MODELS || typeof client?.tool?.list !== "function") return
    listed.add(key)
    let timer
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve(null), TOOL_LIST_TIMEOUT_MS)
    })
    try {
      const answer = await Promise.race([client.tool.list({ query: { provider, model: id } }), timeout])
      const tools = Array.isArray(answer?.data) ? answer.data : Array.isArray(answer) ? answer : []
      for (const tool of tools) {
        if (typeof tool?.id === "string" && isJsonSchema(tool.parameters)) {
          helper.rememberSchema(tool.id, JSON.parse(JSON.stringify(tool.parameters)))
        }
      }
    } catch {
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    "chat.params": async (input) => {
      try {
        rememberModel(input?.sessionID, input?.model, input?.provider)
        await learnTools(input?.model)
      } catch {}
    },
    "chat.message": async (input) => {
      try {
        rememberModel(input?.sessionID, input?.model)
      } catch {}
    },
    "tool.definition": async (input, definition) => {
      try {
        const output = /** @type {ToolDefinitionOutput} */ (definition)
        const schema = isJsonSchema(output?.jsonSchema) ? output.jsonSchema : output?.parameters
        if (typeof input?.toolID === "string" && isJsonSchema(schema)) {
          helper.rememberSchema(input.toolID, JSON.parse(JSON.stringify(schema)))
        }
      } catch {}
    },
    "tool.execute.before": async (input, output) => {
      let reply = null
      try {
        if (!isObject(output?.args) || typeof input?.tool !== "string") return
        reply = await helper.request({
          op: "before",
          tool: input.tool,
          sessionID: input.sessionID,
          callID: input.callID,
          model: models.get(input.sessionID),
          args: output.args,
        })
        if (!isObject(reply) || reply.error) return
        if (reply.action === "rewrite" && isObject(reply.args)) {
          // In place: OpenCode may keep its own reference to the args object.
          for (const key of Object.keys(output.args)) delete output.args[key]
          Object.assign(output.args, reply.args)
          if (typeof reply.notes === "string" && reply.notes && typeof input.callID === "string") {
            if (notes.size >= MAX_PENDING_NOTES) notes.delete(notes.keys().next().value)
            notes.set(input.callID, reply.notes)
          }
        }
      } catch (error) {
        const why = error instanceof Error ? error.message : error
        console.error(`[streamrepair] tool.execute.before: ${why}; passed through`)
        return
      }
      if (reply.action === "reject" && typeof reply.message === "string") {
        throw new Error(reply.message)
      }
    },
    "tool.execute.after": async (input, output) => {
      try {
        const note = notes.get(input?.callID)
        if (note !== undefined) {
          notes.delete(input.callID)
          addNote(output, note)
        }
        const error = isObject(output?.metadata) && output.metadata.error !== undefined
        helper.notify({
          op: "after",
          tool: input?.tool,
          sessionID: input?.sessionID,
          callID: input?.callID,
          error: Boolean(error),
        })
      } catch {}
    },
  }
}
