// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/**
 * Stand-ins for the L1 data-fee interfaces of L2 nodes, placed at their addresses on the devnet
 * (anvil_setCode) so the bundler's L1 data cost can be tested without an L2. Each charges a fixed
 * price per calldata byte, which a test sets and can then check against.
 */

/// OP stack's GasPriceOracle (0x420000000000000000000000000000000000000F): getL1Fee in wei.
contract GasPriceOracleStandIn {
    /// Wei of L1 fee per byte of the transaction.
    uint256 public weiPerByte;

    function setWeiPerByte(uint256 value) external {
        weiPerByte = value;
    }

    function getL1Fee(bytes calldata data) external view returns (uint256) {
        return data.length * weiPerByte;
    }
}

/// Arbitrum's NodeInterface (0x…C8): gasEstimateL1Component in L2 gas at the L2 base fee, here fixed at 1 gwei.
contract NodeInterfaceStandIn {
    /// L2 gas per byte of calldata.
    uint256 public gasPerByte;

    function setGasPerByte(uint256 value) external {
        gasPerByte = value;
    }

    function gasEstimateL1Component(address, bool, bytes calldata data)
        external
        payable
        returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)
    {
        return (uint64(data.length * gasPerByte), 1 gwei, 1 gwei);
    }
}
