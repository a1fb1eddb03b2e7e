"""Verifying a signed preconfirmation: its EIP-712 digest, and the address that signed it.

Domain {name: "Bundlekit Preconfirmation", version: "1", chainId, verifyingContract: entryPoint};
message Preconfirmation(bytes32 userOpHash,uint256 blockNumber,bytes32 transactionHash).
"""
import secp256k1
from keccak import keccak256

_DOMAIN_TYPE = keccak256(b"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
_PRECONFIRMATION_TYPE = keccak256(b"Preconfirmation(bytes32 userOpHash,uint256 blockNumber,bytes32 transactionHash)")


def _word(value) -> bytes:
    """A quantity (int or hex text) or a hash/address (hex text) as a 32-byte ABI word."""
    number = value if isinstance(value, int) else int(value, 16)
    return number.to_bytes(32, "big")


def digest(preconfirmation: dict) -> bytes:
    """The EIP-712 hash the preconfirmation key signs (`0x1901 ‖ domain separator ‖ struct hash`)."""
    domain = keccak256(_DOMAIN_TYPE + keccak256(b"Bundlekit Preconfirmation") + keccak256(b"1")
                       + _word(preconfirmation["chainId"]) + _word(preconfirmation["entryPoint"]))
    message = keccak256(_PRECONFIRMATION_TYPE + _word(preconfirmation["userOpHash"])
                        + _word(preconfirmation["blockNumber"]) + _word(preconfirmation["transactionHash"]))
    return keccak256(b"\x19\x01" + domain + message)


def recover_signer(preconfirmation: dict) -> str:
    """The checksummed address whose key made `signature` (65 bytes r ‖ s ‖ v, v 27/28 or 0/1)."""
    signature = bytes.fromhex(preconfirmation["signature"].removeprefix("0x"))
    if len(signature) != 65:
        raise ValueError(f"a signature is 65 bytes, not {len(signature)}")
    v = signature[64]
    point = secp256k1.recover(digest(preconfirmation), int.from_bytes(signature[:32], "big"),
                              int.from_bytes(signature[32:64], "big"), v - 27 if v >= 27 else v)
    return secp256k1.address_of_point(point)
