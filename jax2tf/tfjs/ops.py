"""What TensorFlow.js runs: the TF ops its graph models map to kernels, and
the dtypes it holds.

Recorded from @tensorflow/tfjs-converter 4.22.0, the version that
package.json pins (`node tools/tfjs_op_names.js` prints the list of the
installed one; tests/tfjs/test_ops.py fails when the two differ). TF.js
loads a graph holding any other op, and fails when it comes to run it.
"""

TFJS_VERSION = "4.22.0"

OPS = frozenset(
  """
  Abs Acos Acosh Add AddN AddV2 All Any ArgMax ArgMin Asin Asinh Atan Atan2 Atanh AvgPool
  AvgPool3D BatchMatMul BatchMatMulV2 BatchToSpaceND BiasAdd Bincount BitwiseAnd BroadcastArgs
  BroadcastTo Cast Ceil ClipByValue Complex ComplexAbs Concat ConcatV2 Const Conv1D Conv2D
  Conv2DBackpropInput Conv3D Cos Cosh CropAndResize Cumprod Cumsum DenseBincount DepthToSpace
  DepthwiseConv2d DepthwiseConv2dNative Dilation2D Div DivNoNan Einsum Elu EmptyTensorList
  EnsureShape Enter Equal Erf EuclideanNorm Exit Exp ExpandDims Expm1 FFT
  FakeQuantWithMinMaxVars Fill Floor FloorDiv FloorMod FusedBatchNorm FusedBatchNormV2
  FusedBatchNormV3 FusedDepthwiseConv2dNative Gather GatherNd GatherV2 Greater GreaterEqual
  HashTable HashTableV2 IFFT IRFFT Identity IdentityN If Imag ImageProjectiveTransformV3
  InitializeTable InitializeTableV2 IsFinite IsInf IsNan LRN LeakyRelu Less LessEqual LinSpace
  ListDiff Log Log1p LogSoftmax LogicalAnd LogicalNot LogicalOr LookupTableFind
  LookupTableFindV2 LookupTableImport LookupTableImportV2 LookupTableSize LookupTableSizeV2
  LoopCond LowerBound MatMul MatrixBandPart Max MaxPool MaxPool3D MaxPoolWithArgmax Maximum
  Mean Merge Min Minimum MirrorPad Mod Mul Multinomial Neg NextIteration NoOp
  NonMaxSuppressionV2 NonMaxSuppressionV3 NonMaxSuppressionV4 NonMaxSuppressionV5 NotEqual
  OneHot Ones OnesLike Pack Pad PadV2 Placeholder PlaceholderWithDefault Pow Prelu Print Prod
  RFFT RaggedGather RaggedRange RaggedTensorToTensor RandomStandardNormal RandomUniform
  RandomUniformInt Range Rank Real RealDiv Reciprocal Relu Relu6 Reshape ResizeBilinear
  ResizeNearestNeighbor Reverse ReverseV2 Round Rsqrt ScatterNd Select SelectV2 Selu Shape
  ShapeN Sigmoid Sign SimpleMLCreateModelResource SimpleMLInferenceOpWithHandle
  SimpleMLLoadModelFromPathWithHandle Sin Sinh Size Slice Snapshot Softmax Softplus
  SpaceToBatchND SparseFillEmptyRows SparseReshape SparseSegmentMean SparseSegmentSum
  SparseToDense Split SplitV Sqrt Square SquaredDifference Squeeze StatelessIf StatelessWhile
  StaticRegexReplace StopGradient StridedSlice StringNGrams StringSplit StringToHashBucketFast
  Sub Sum Switch Tan Tanh TensorArrayCloseV3 TensorArrayConcatV3 TensorArrayGatherV3
  TensorArrayReadV3 TensorArrayScatterV3 TensorArraySizeV3 TensorArraySplitV3 TensorArrayV3
  TensorArrayWriteV3 TensorListConcat TensorListConcatV2 TensorListFromTensor TensorListGather
  TensorListGetItem TensorListLength TensorListPopBack TensorListPushBack TensorListReserve
  TensorListResize TensorListScatter TensorListScatterV2 TensorListSetItem TensorListSplit
  TensorListStack TensorScatterUpdate Tile TopKV2 Transpose TruncatedNormal Unique UniqueV2
  Unpack UpperBound Where While Zeros ZerosLike _FusedConv2D _FusedMatMul
  """.split()
)

# Ops the converter maps but cannot run, with the reason: refused like the
# ops it lacks.
BROKEN = {
  "BitwiseAnd": "its op mapping names the inputs x and y where its executor reads a and b, "
  "so every call fails (and its kernel does not broadcast)",
}
# What a TF.js graph model may hold.
RUNS = OPS - BROKEN.keys()

# TF dtypes (tf.DType.name) that TF.js computes in as TF does. It reads int64
# tensors as int32, which holds the shapes and indices of a program that JAX
# traced without x64 (a JAX value of 64 bits is refused at the signature);
# variant is the handle of the TensorLists that loops accumulate into.
DTYPES = frozenset({"float32", "int32", "bool", "complex64", "string", "int64", "variant"})
# TF ops whose TF.js kernels take complex64 tensors (read from the cpu
# backend's kernels; the others assert that no input is complex and fail
# when the model runs): arithmetic that has a complex form, the complex
# constructors and readers, reshapes, concatenation, shape queries, and the
# executor's own routing of values through identities and loops.
COMPLEX64_OPS = frozenset(
  """
  Add AddV2 Sub Mul Cast Complex Real Imag ComplexAbs FFT IFFT RFFT IRFFT
  Reshape ExpandDims Squeeze ConcatV2 Concat Pack ZerosLike OnesLike
  Shape ShapeN Size Rank Const Placeholder Identity IdentityN Snapshot StopGradient
  Enter Exit Switch Merge NextIteration LoopCond While StatelessWhile If StatelessIf
  """.split()
)
# The dtypes of the model's inputs and outputs, which cross into JavaScript
# typed arrays (Float32Array, Int32Array, Uint8Array).
SIGNATURE_DTYPES = ("float32", "int32", "bool")
