// Row-major Eigen views over raw float buffers, shared by the CPU backend's matrix code.
// The views own nothing: they map the backend's single buffers without copying.
#pragma once
#include <Eigen/Core>

namespace normlab {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixView = Eigen::Map<RowMatrix>;
using ConstMatrixView = Eigen::Map<const RowMatrix>;
// A row-major block inside a wider matrix (e.g. one head's columns of qkv).
using StridedView = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;
using ConstStridedView = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

}  // namespace normlab
