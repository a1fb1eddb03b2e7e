/**
 * The ERC-7562 collector as a node-side JavaScript tracer (`debug_traceCall` with `tracer` set to
 * this object), written for anvil's tracer engine and its pitfalls (anvil-js-tracer-notes.md):
 * every memory read is clamped (reads past memory throw there, even of length 0, and silently
 * revert the frame), stack values are read through `toString(16)` (BigInt on anvil), errors are
 * tested with `!= null`, out-of-gas comes from `exit()` (for a creation, which anvil reports
 * without an error even when it fails, from all its gas spent), and every hook body is wrapped so a
 * tracer bug is reported instead of changing execution. It collects the same facts, per phase,
 * as the in-process collector; `parseJsTrace` turns its result into the normalised trace.
 */
/** Opcodes the Prague EVM defines; any other runs as INVALID and counts as unassigned (OP-013). */
const assignedOpcodes = [
  ...range(0x00, 0x0b),
  ...range(0x10, 0x1d),
  0x20,
  ...range(0x30, 0x4a),
  ...range(0x50, 0xa4),
  ...range(0xf0, 0xf5),
  0xfa,
  0xfd,
  0xfe,
  0xff,
];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** The tracer for `entryPoint`. */
export function erc7562JsTracer(entryPoint: string): string {
  return tracerSource
    .replace("ENTRY_POINT", entryPoint.toLowerCase())
    .replace("ASSIGNED_OPCODES", `{ ${assignedOpcodes.map((op) => `${op}: true`).join(", ")} }`);
}

const tracerSource = `{
  ep: "ENTRY_POINT",
  phases: [],
  keccak: [],
  phase: null,
  depth: 1,
  pending: null,
  lastCreate: null,
  frames: [],
  errors: [],
  counted: { 0x32: "ORIGIN", 0x3a: "GASPRICE", 0x40: "BLOCKHASH", 0x41: "COINBASE", 0x42: "TIMESTAMP", 0x43: "NUMBER", 0x44: "PREVRANDAO", 0x45: "GASLIMIT", 0x48: "BASEFEE", 0x49: "BLOBHASH", 0x4a: "BLOBBASEFEE", 0xff: "SELFDESTRUCT", 0x31: "BALANCE", 0x47: "SELFBALANCE", 0xfe: "INVALID" },
  calls: { 0xf1: "CALL", 0xf2: "CALLCODE", 0xf4: "DELEGATECALL", 0xfa: "STATICCALL" },
  codes: { 0x3b: "EXTCODESIZE", 0x3c: "EXTCODECOPY", 0x3f: "EXTCODEHASH" },
  assigned: ASSIGNED_OPCODES,
  word: function (x) { var h = x.toString(16); while (h.length < 64) h = "0" + h; return "0x" + h; },
  addr: function (x) { var h = x.toString(16); if (h.length > 40) h = h.substr(h.length - 40); while (h.length < 40) h = "0" + h; return "0x" + h; },
  num: function (x) { return parseInt(x.toString(16), 16); },
  sl: function (mem, a, b) {
    if (b <= a) return new Uint8Array(0);
    var L = mem.length();
    if (a >= L) return new Uint8Array(b - a);
    if (b <= L) return mem.slice(a, b);
    var out = new Uint8Array(b - a); out.set(mem.slice(a, L), 0); return out;
  },
  codeKind: function (db, address) {
    var code = db.getCode(address);
    if (code.length === 0) return "none";
    return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00 ? "delegated" : "contract";
  },
  count: function (name) { this.phase.opcodes[name] = (this.phase.opcodes[name] || 0) + 1; },
  setup: function () {},
  enter: function (frame) {
    try {
      this.depth++;
      var create = null;
      if (this.lastCreate && (frame.getType() === "CREATE" || frame.getType() === "CREATE2")) { create = this.lastCreate; create.address = toHex(frame.getTo()); this.lastCreate = null; }
      this.frames.push({ create: create, gas: this.num(frame.getGas()), reverted: false, halted: false });
      if (this.depth === 2 && toHex(frame.getFrom()) === this.ep) {
        var input = frame.getInput();
        this.phase = { to: toHex(frame.getTo()), selector: toHex(input.length >= 4 ? input.slice(0, 4) : input), opcodes: {}, storage: {}, transientStorage: {}, calls: [], codeAccesses: [], creates: [], outOfGas: false };
        this.phases.push(this.phase);
      }
    } catch (e) { this.errors.push("enter: " + e); }
  },
  exit: function (result) {
    try {
      if (this.phase && result.getError() != null && String(result.getError()).indexOf("out of gas") >= 0) this.phase.outOfGas = true;
      var frame = this.frames.pop();
      if (frame && frame.create && result.getError() == null) {
        // anvil reports no error when a creation fails; a frame that spent all its gas without halting on an opcode ran out of it.
        var spentAll = this.num(result.getGasUsed()) === frame.gas;
        if (spentAll || frame.reverted || frame.halted) frame.create.address = null;
        if (spentAll && !frame.halted && this.phase) this.phase.outOfGas = true;
      }
      if (this.depth === 2) this.phase = null;
      this.depth--;
    } catch (e) { this.errors.push("exit: " + e); }
  },
  step: function (log, db) {
    try {
      if (!this.phase) return;
      var op = log.op.toNumber();
      var pending = this.pending;
      this.pending = null;
      if (pending) {
        if (pending.kind === "GAS" && !this.calls[op]) this.count("GAS");
        if (pending.kind === "CODE" && op === 0x15) pending.access.thenIszero = true;
      }
      var frame = this.frames[this.frames.length - 1];
      if (frame && op === 0xfd) frame.reverted = true;
      if (frame && (op === 0xfe || !this.assigned[op])) frame.halted = true;
      var self = toHex(log.contract.getAddress());
      if (op === 0x54 || op === 0x55 || op === 0x5c || op === 0x5d) {
        var transient = op >= 0x5c;
        var slot = this.word(log.stack.peek(0));
        var map = transient ? this.phase.transientStorage : this.phase.storage;
        var slots = map[self] || (map[self] = {});
        var write = op === 0x55 || op === 0x5d;
        var access = slots[slot];
        if (access) { if (write) access.write = true; else access.read = true; return; }
        if (write) slots[slot] = { read: false, write: true };
        else slots[slot] = { read: true, write: false, firstValue: transient ? this.word(0) : toHex(db.getState(self, toWord(slot))) };
        return;
      }
      if (op === 0x20) {
        var offset = this.num(log.stack.peek(0)), size = this.num(log.stack.peek(1));
        if (size < 32) return;
        var data = this.sl(log.memory, offset, offset + size);
        for (var z = 0; z < 12; z++) if (data[z] !== 0) return;
        this.keccak.push(toHex(data));
        return;
      }
      // Storage and KECCAK256 inputs count wherever they happen; opcodes, calls and code access not in the EntryPoint's own code.
      if (self === this.ep) return;
      if (op === 0x5a) { this.pending = { kind: "GAS" }; return; }
      if (this.counted[op]) { this.count(this.counted[op]); return; }
      if (this.calls[op]) {
        var withValue = op === 0xf1 || op === 0xf2;
        var to = this.addr(log.stack.peek(1));
        var inOffset = this.num(log.stack.peek(withValue ? 3 : 2)), inSize = this.num(log.stack.peek(withValue ? 4 : 3));
        var head = this.sl(log.memory, inOffset, inOffset + Math.min(inSize, 36));
        this.phase.calls.push({ type: this.calls[op], from: self, to: to, value: withValue ? "0x" + log.stack.peek(2).toString(16) : "0x0", input: toHex(head), code: this.codeKind(db, to) });
        return;
      }
      if (this.codes[op]) {
        var target = this.addr(log.stack.peek(0));
        var codeAccess = { opcode: this.codes[op], from: self, address: target, code: this.codeKind(db, target), thenIszero: false };
        this.phase.codeAccesses.push(codeAccess);
        if (op === 0x3b) this.pending = { kind: "CODE", access: codeAccess };
        return;
      }
      if (op === 0xf0 || op === 0xf5) {
        this.lastCreate = { opcode: op === 0xf0 ? "CREATE" : "CREATE2", from: self, address: null };
        this.phase.creates.push(this.lastCreate);
        return;
      }
      if (!this.assigned[op]) this.count("0x" + (op < 16 ? "0" : "") + op.toString(16));
    } catch (e) { this.errors.push("step: " + e); }
  },
  fault: function () {},
  result: function (ctx) {
    return { phases: this.phases, keccak: this.keccak, output: toHex(ctx.output), error: ctx.error != null ? String(ctx.error) : null, errors: this.errors };
  }
}`;
