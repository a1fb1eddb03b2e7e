"""The builder's cryptography against what viem makes of the same inputs (test_vectors.json,
written by ../test/python-vectors.ts): Keccak-256, secp256k1 signatures, signed transactions,
and the signer of a preconfirmation."""
import json
import pathlib
import unittest

import auth
import preconfirmation
import secp256k1
from keccak import keccak256
from transaction import sign_transaction

VECTORS = json.loads((pathlib.Path(__file__).parent / "test_vectors.json").read_text())
KEY = bytes.fromhex(VECTORS["key"][2:])


def unhex(text: str) -> bytes:
    return bytes.fromhex(text[2:])


class Keccak(unittest.TestCase):
    def test_hashes_as_viem_including_inputs_at_and_past_the_rate(self):
        for vector in VECTORS["keccak"]:
            self.assertEqual("0x" + keccak256(unhex(vector["input"])).hex(), vector["hash"])


class Signing(unittest.TestCase):
    def test_the_key_has_viems_address(self):
        self.assertEqual(secp256k1.address_of_key(KEY), VECTORS["address"])

    def test_signs_as_viem_deterministic_nonce_and_low_s(self):
        for vector in VECTORS["signatures"]:
            r, s, y_parity = secp256k1.sign(unhex(vector["hash"]), KEY)
            self.assertEqual((r, s, y_parity), (int(vector["r"], 16), int(vector["s"], 16), vector["yParity"]))

    def test_signs_transactions_as_viem(self):
        for vector in VECTORS["transactions"]:
            self.assertEqual(sign_transaction(vector["tx"], KEY), (vector["raw"], vector["hash"]))


class Preconfirmation(unittest.TestCase):
    def test_recovers_the_signer_of_viems_typed_data_signature(self):
        for vector in VECTORS["preconfirmations"]:
            self.assertEqual(preconfirmation.recover_signer(vector), vector["signer"])

    def test_a_changed_field_recovers_another_signer(self):
        for field, value in [("blockNumber", "0x1b5"), ("chainId", "0x1"), ("userOpHash", "0x" + "11" * 32),
                             ("transactionHash", "0x" + "22" * 32), ("entryPoint", "0x" + "33" * 20)]:
            changed = {**VECTORS["preconfirmations"][0], field: value}
            self.assertNotEqual(preconfirmation.recover_signer(changed), changed["signer"], field)


class Jwt(unittest.TestCase):
    def test_hs256_token_over_header_and_iat(self):
        # RFC 7519's shape: base64url(header).base64url(payload).base64url(HMAC-SHA256); the
        # service's acceptance of it is the end-to-end test's.
        header, payload, signature = auth.token(b"\x01" * 32, 1764130000).split(".")
        self.assertEqual(header, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9")
        self.assertEqual(payload, "eyJpYXQiOjE3NjQxMzAwMDB9")
        self.assertEqual(len(signature), 43)


if __name__ == "__main__":
    unittest.main()
