module @jit_einsums attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<4x8x8xf32>, %arg3: tensor<4x8x16xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<4x8x8xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<4x8x16xf32> {jax.result_info = "result[3]"}, tensor<2x4xf32> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.dot_general %arg0, %0, batching_dims = [0] x [0], contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xf32>
    %2 = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %3 = stablehlo.dot_general %arg2, %arg2, contracting_dims = [0, 1, 2] x [0, 1, 2], precision = [DEFAULT, DEFAULT] : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<f32>
    %4 = stablehlo.dot_general %arg2, %arg3, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x8x8xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
    %5 = stablehlo.slice %arg1 [0:2, 0:8] : (tensor<8x8xf32>) -> tensor<2x8xf32>
    %6 = stablehlo.dot_general %5, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    return %1, %2, %3, %4, %6 : tensor<4xf32>, tensor<4x8x8xf32>, tensor<f32>, tensor<4x8x16xf32>, tensor<2x4xf32>
  }
}
