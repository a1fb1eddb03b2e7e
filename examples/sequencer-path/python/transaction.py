"""Signing a proposal's transaction: EIP-1559 (type 2), or EIP-7702 (type 4) with an authorization list.

A transaction is a dict with JSON-RPC-style hex fields: chainId, nonce, to, data, gas, value,
maxFeePerGas, maxPriorityFeePerGas, accessList ([{address, storageKeys}]), authorizationList
([{address, chainId, nonce, yParity, r, s}]).
"""
import rlp
import secp256k1
from keccak import keccak256


def _bytes(hex_text: str) -> bytes:
    return bytes.fromhex(hex_text.removeprefix("0x"))


def _int(value) -> int:
    return value if isinstance(value, int) else int(value, 16)


def _fields(tx: dict) -> tuple[int, list]:
    access_list = [[_bytes(entry["address"]), [_bytes(key) for key in entry["storageKeys"]]]
                   for entry in tx.get("accessList") or []]
    fields = [_int(tx["chainId"]), _int(tx["nonce"]), _int(tx["maxPriorityFeePerGas"]), _int(tx["maxFeePerGas"]),
              _int(tx["gas"]), _bytes(tx["to"]), _int(tx.get("value", 0)), _bytes(tx.get("data", "0x")), access_list]
    authorizations = tx.get("authorizationList") or []
    if not authorizations:
        return 2, fields
    fields.append([[_int(a["chainId"]), _bytes(a["address"]), _int(a["nonce"]), _int(a["yParity"]), _int(a["r"]), _int(a["s"])]
                   for a in authorizations])
    return 4, fields


def sign_transaction(tx: dict, private_key: bytes) -> tuple[str, str]:
    """The raw signed transaction (0x hex, for eth_sendRawTransaction) and its hash."""
    kind, fields = _fields(tx)
    r, s, y_parity = secp256k1.sign(keccak256(bytes([kind]) + rlp.encode(fields)), private_key)
    raw = bytes([kind]) + rlp.encode(fields + [y_parity, r, s])
    return "0x" + raw.hex(), "0x" + keccak256(raw).hex()
