"""A block builder that pulls its bundles from Bundlekit's builder API, with only the standard library.

Each block it proposes (the unsigned form), signs the bundle transaction with its own key, sends it
first, commits it with its hash, and mines the block. The node is anvil started with `--order fifo`
(a block's transactions in arrival order): the builder turns its automine off and mines with
`evm_mine`. Told to drop a bundle, or when the node refuses it, it releases the bundle and
its operations go back to the pool. Before mining, it verifies each committed operation's signed
preconfirmation from the public endpoint (`eth_getUserOperationByHash`): who signed it (EIP-712,
recovered here), and that it names this block, transaction, chain and EntryPoint.

    BUILDER_PRIVATE_KEY=0x… python3 builder.py --builder-url http://127.0.0.1:4338/ \\
        --jwt-secret-file jwt.hex --node-url http://127.0.0.1:8545 \\
        --bundler-url http://127.0.0.1:4337/v1/31337/ [--preconfirmation-signer 0x…] [--block-time 1 [--drop-every N]]

With `--block-time` it builds a block every so many seconds (dropping the bundle of every Nth
with `--drop-every`, as if the block were full); without, it reads commands from
stdin, one a line: `build` (a block with the bundle) or `drop` (a block without it: propose, then
release). It writes one JSON line per block to stdout.
"""
import argparse
import itertools
import json
import os
import sys
import time
import urllib.error
import urllib.request

import auth
import preconfirmation
import secp256k1
from transaction import sign_transaction


class Dropped(Exception):
    """The builder leaves the bundle out of its block (told to, as if the block were full)."""


class RpcError(Exception):
    """A JSON-RPC error answer: its code, message and data."""

    def __init__(self, method: str, error: dict):
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")


def rpc(url: str, method: str, params: list, headers: dict | None = None):
    """Call `method` at `url` and return its result, or raise RpcError."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as error:  # the builder API answers 401 with a JSON-RPC error
        answer = json.load(error)
    if "error" in answer:
        raise RpcError(method, answer["error"])
    return answer["result"]


class Builder:
    def __init__(self, options, private_key: bytes, secret: bytes):
        self.options = options
        self.key = private_key
        self.secret = secret
        self.address = secp256k1.address_of_key(private_key)
        self.chain_id = int(self.node("eth_chainId", []), 16)

    def node(self, method, params):
        return rpc(self.options.node_url, method, params)

    def builder(self, method, params):
        bearer = auth.token(self.secret, int(time.time()))  # a fresh token per request
        return rpc(self.options.builder_url, method, params, {"authorization": f"Bearer {bearer}"})

    def propose(self, latest):
        """The proposal for the block after `latest`, or None when no operation is ready."""
        gas_limit = int(latest["gasLimit"], 16)
        return self.builder("builder_proposeBundle", [{
            "blockNumber": hex(int(latest["number"], 16) + 1),
            "timestamp": hex(int(latest["timestamp"], 16) + 1),
            "baseFee": latest.get("baseFeePerGas", "0x0"),
            "gasBudget": hex(gas_limit // 2),
            "from": self.address,
        }])

    def include(self, proposal) -> str:
        """Sign the proposal's transaction at our next nonce and send it: the block's first transaction."""
        nonce = self.node("eth_getTransactionCount", [self.address, "pending"])
        raw, transaction_hash = sign_transaction({**proposal, "chainId": self.chain_id, "nonce": nonce}, self.key)
        sent = self.node("eth_sendRawTransaction", [raw])
        if sent.lower() != transaction_hash:
            raise ValueError(f"the node hashed the bundle as {sent}, not {transaction_hash}")
        return transaction_hash

    def block(self, drop: bool) -> dict:
        latest = self.node("eth_getBlockByNumber", ["latest", False])
        proposal = self.propose(latest)
        record = {"blockNumber": int(latest["number"], 16) + 1, "proposal": None, "action": None,
                  "transactionHash": None, "userOpHashes": []}
        if proposal:
            record.update(proposal=proposal["id"], entryPoint=proposal["entryPoint"],
                          userOpHashes=proposal["userOpHashes"])
            try:
                if drop:
                    raise Dropped("dropped: the block is full")
                transaction_hash = self.include(proposal)
            except (Dropped, RpcError, ValueError) as error:  # not in this block: back to the pool
                self.builder("builder_releaseBundle", [proposal["id"]])
                record.update(action="released", reason=str(error))
            else:
                self.builder("builder_commitBundle", [proposal["id"], transaction_hash])
                record.update(action="committed", transactionHash=transaction_hash)
        if record["action"] == "committed":  # the promise is signed before the block exists
            record["preconfirmations"] = [self.verify(op, record) for op in record["userOpHashes"]]
        self.node("evm_mine", [])
        return record

    def verify(self, user_op_hash: str, record: dict) -> dict:
        """The operation's signed preconfirmation from the public endpoint, checked: who signed it, and whether it names our block."""
        found = rpc(self.options.bundler_url, "eth_getUserOperationByHash", [user_op_hash])
        signed = (found or {}).get("preconfirmation")
        if not signed or not signed.get("signature"):
            return {"userOpHash": user_op_hash, "verified": False,
                    "reason": "unsigned preconfirmation" if signed else "no preconfirmation in the lookup"}
        signer = preconfirmation.recover_signer(signed)
        problems = [name for name, ok in [
            ("userOpHash", signed["userOpHash"].lower() == user_op_hash.lower()),
            ("blockNumber", int(str(signed["blockNumber"]), 0) == record["blockNumber"]),
            ("transactionHash", signed["transactionHash"].lower() == record["transactionHash"]),
            ("entryPoint", signed["entryPoint"].lower() == record["entryPoint"].lower()),
            ("chainId", int(str(signed["chainId"]), 0) == self.chain_id),
            ("signer", signer.lower() == signed["signer"].lower()),
            ("expected signer", not self.options.preconfirmation_signer
             or signer.lower() == self.options.preconfirmation_signer.lower()),
        ] if not ok]
        return {"userOpHash": user_op_hash, "signer": signer, "status": signed.get("status"),
                "verified": not problems, **({"reason": "mismatch: " + ", ".join(problems)} if problems else {})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builder-url", required=True, help="the service's builder API")
    parser.add_argument("--jwt-secret-file", required=True, help="the shared secret: 32 bytes as 64 hex digits")
    parser.add_argument("--node-url", required=True, help="the chain's node: anvil, whose automine the builder turns off")
    parser.add_argument("--bundler-url", required=True, help="the service's public endpoint (preconfirmation lookups)")
    parser.add_argument("--preconfirmation-signer", help="the address preconfirmations must be signed by")
    parser.add_argument("--block-time", type=float, help="seconds between blocks; without it, commands from stdin")
    parser.add_argument("--drop-every", type=int, default=0, metavar="N",
                        help="with --block-time: every Nth block is full, its bundle dropped (released)")
    options = parser.parse_args()
    key = os.environ.get("BUILDER_PRIVATE_KEY")
    if not key:
        parser.error("BUILDER_PRIVATE_KEY (the builder's key, 0x hex) is required in the environment")
    builder = Builder(options, bytes.fromhex(key.removeprefix("0x")), auth.read_secret(options.jwt_secret_file))
    builder.node("evm_setAutomine", [False])  # blocks are ours to build

    def emit(record):
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    if options.block_time:
        for count in itertools.count(1):
            started = time.monotonic()
            try:
                emit(builder.block(drop=options.drop_every > 0 and count % options.drop_every == 0))
            except (RpcError, OSError) as error:  # one failed block; the next may do
                sys.stderr.write(f"block failed: {error}\n")
            time.sleep(max(0.0, options.block_time - (time.monotonic() - started)))
    for line in sys.stdin:
        command = line.strip()
        if command in ("build", "drop"):
            emit(builder.block(drop=command == "drop"))
        elif command:
            emit({"error": f"unknown command {command!r}: build or drop"})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(0)
