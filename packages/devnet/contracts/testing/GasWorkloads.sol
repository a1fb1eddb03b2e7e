// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/**
 * Callees for gas-estimation tests and benchmarks: each needs a known amount of gas from the
 * operation's call.
 */
contract GasWorkloads {
    uint256 public counter;
    bytes32 public digest;

    /// Fails unless at least `required` gas reached it: a call that must be forwarded enough gas (63/64 rule).
    function requireGas(uint256 required) external {
        require(gasleft() >= required, "GasWorkloads: not enough gas forwarded");
        counter += 1;
    }

    /// Hashes `rounds` times and writes the result: gas grows with `rounds`.
    function loop(uint256 rounds) external {
        bytes32 h = digest;
        for (uint256 i = 0; i < rounds; i++) h = keccak256(abi.encode(h, i));
        digest = h;
    }

    /// Accepts any calldata (e.g. large payloads) and counts the calls.
    function consume(bytes calldata data) external {
        counter += data.length;
    }

    error Refused(uint256 code);

    /// Always reverts with a reason: Error(string).
    function fail(string calldata reason) external pure {
        revert(reason);
    }

    /// Panics (division by zero, Panic(0x12)) when `b` is 0.
    function divide(uint256 a, uint256 b) external pure returns (uint256) {
        return a / b;
    }

    /// Always reverts with a custom error.
    function refuse(uint256 code) external pure {
        revert Refused(code);
    }
}
