module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x7xf32>, %arg1: tensor<5x7xf32>) -> (tensor<5x7xf32> {jax.result_info = "result[0]"}, tensor<7xf32> {jax.result_info = "result[1]"}, tensor<5xf32> {jax.result_info = "result[2]"}, tensor<7x5xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.sine %arg0 : tensor<5x7xf32>
    %1 = stablehlo.add %0, %arg1 : tensor<5x7xf32>
    %2 = stablehlo.multiply %arg0, %arg1 : tensor<5x7xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<5x7xf32>, tensor<f32>) -> tensor<7xf32>
    %4 = stablehlo.exponential %arg0 : tensor<5x7xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<5x7xf32>, tensor<f32>) -> tensor<5xf32>
    %6 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<5x7xf32>) -> tensor<7x5xf32>
    return %1, %3, %5, %6 : tensor<5x7xf32>, tensor<7xf32>, tensor<5xf32>, tensor<7x5xf32>
  }
}
