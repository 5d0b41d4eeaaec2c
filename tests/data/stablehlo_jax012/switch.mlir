module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convert %arg0 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %1 = stablehlo.clamp %c, %0, %c_0 : tensor<i32>
    %2:2 = "stablehlo.case"(%1) ({
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %3 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %arg1, %3 : tensor<4xf32>, tensor<f32>
    }, {
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %4 = stablehlo.multiply %arg1, %3 : tensor<4xf32>
      %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %5 = stablehlo.reduce(%arg1 init: %cst_1) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %4, %5 : tensor<4xf32>, tensor<f32>
    }, {
      %3 = stablehlo.negate %arg1 : tensor<4xf32>
      %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
      %4 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.minimum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %3, %4 : tensor<4xf32>, tensor<f32>
    }) : (tensor<i32>) -> (tensor<4xf32>, tensor<f32>)
    return %2#0, %2#1 : tensor<4xf32>, tensor<f32>
  }
}
