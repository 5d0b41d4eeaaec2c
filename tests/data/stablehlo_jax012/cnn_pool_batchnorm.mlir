module @jit_cnn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<10xf32>, %arg2: tensor<16xf32>, %arg3: tensor<3x3x3x8xf32>, %arg4: tensor<3x3x8x16xf32>, %arg5: tensor<256x10xf32>, %arg6: tensor<4x16x16x3xf32>) -> (tensor<4x10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg6, %arg3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x16x16x3xf32>, tensor<3x3x3x8xf32>) -> tensor<4x16x16x8xf32>
    %1 = call @relu(%0) : (tensor<4x16x16x8xf32>) -> tensor<4x16x16x8xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.reduce_window"(%1, %2) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %34 = stablehlo.maximum %arg7, %arg8 : tensor<f32>
      stablehlo.return %34 : tensor<f32>
    }) : (tensor<4x16x16x8xf32>, tensor<f32>) -> tensor<4x8x8x8xf32>
    %4 = stablehlo.convolution(%3, %arg4) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x8x8x8xf32>, tensor<3x3x8x16xf32>) -> tensor<4x8x8x16xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x8x8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_1 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %7 = stablehlo.divide %5, %6 : tensor<16xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %8 = call @_var(%4, %c) : (tensor<4x8x8x16xf32>, tensor<i32>) -> tensor<16xf32>
    %9 = stablehlo.broadcast_in_dim %7, dims = [3] : (tensor<16xf32>) -> tensor<1x1x1x16xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
    %11 = stablehlo.subtract %4, %10 : tensor<4x8x8x16xf32>
    %cst_2 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %13 = stablehlo.add %8, %12 : tensor<16xf32>
    %14 = stablehlo.rsqrt %13 : tensor<16xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [3] : (tensor<16xf32>) -> tensor<1x1x1x16xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
    %17 = stablehlo.multiply %11, %16 : tensor<4x8x8x16xf32>
    %18 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<16xf32>) -> tensor<1x1x1x16xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<4x8x8x16xf32>
    %21 = stablehlo.broadcast_in_dim %arg0, dims = [3] : (tensor<16xf32>) -> tensor<1x1x1x16xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
    %23 = stablehlo.add %20, %22 : tensor<4x8x8x16xf32>
    %24 = call @relu_0(%23) : (tensor<4x8x8x16xf32>) -> tensor<4x8x8x16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<f32>
    %26 = "stablehlo.reduce_window"(%24, %25) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %34 = stablehlo.add %arg7, %arg8 : tensor<f32>
      stablehlo.return %34 : tensor<f32>
    }) : (tensor<4x8x8x16xf32>, tensor<f32>) -> tensor<4x4x4x16xf32>
    %cst_4 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x4x4x16xf32>
    %28 = stablehlo.divide %26, %27 : tensor<4x4x4x16xf32>
    %29 = stablehlo.reshape %28 : (tensor<4x4x4x16xf32>) -> tensor<4x256xf32>
    %30 = stablehlo.dot_general %29, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x256xf32>, tensor<256x10xf32>) -> tensor<4x10xf32>
    %31 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<4x10xf32>
    %33 = stablehlo.add %30, %32 : tensor<4x10xf32>
    return %33 : tensor<4x10xf32>
  }
  func.func private @relu(%arg0: tensor<4x16x16x8xf32>) -> tensor<4x16x16x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16x16x8xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x16x16x8xf32>
    return %1 : tensor<4x16x16x8xf32>
  }
  func.func private @_var(%arg0: tensor<4x8x8x16xf32>, %arg1: tensor<i32>) -> tensor<16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x8x8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [3] : (tensor<16xf32>) -> tensor<1x1x1x16xf32>
    %cst_0 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x1x1x16xf32>
    %3 = stablehlo.divide %1, %2 : tensor<1x1x1x16xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<4x8x8x16xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x8x8x16xf32>
    %6 = chlo.square %5 : tensor<4x8x8x16xf32> -> tensor<4x8x8x16xf32>
    %7 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<2.560000e+02> : tensor<f32>
    %8 = stablehlo.subtract %cst_1, %7 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%6 init: %cst_2) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x8x8x16xf32>, tensor<f32>) -> tensor<16xf32>
    %10 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %11 = stablehlo.divide %9, %10 : tensor<16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.compare GT, %8, %cst_3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %13 = call @_where(%12, %11, %cst_4) : (tensor<i1>, tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
    return %13 : tensor<16xf32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<16xf32>, %arg2: tensor<f32>) -> tensor<16xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<i1>, tensor<16xf32>
    return %2 : tensor<16xf32>
  }
  func.func private @relu_0(%arg0: tensor<4x8x8x16xf32>) -> tensor<4x8x8x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8x8x16xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x8x8x16xf32>
    return %1 : tensor<4x8x8x16xf32>
  }
}
