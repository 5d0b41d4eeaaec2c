module @jit_embed_update attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<50x16xf32>, %arg1: tensor<4x6xi32>, %arg2: tensor<4x6x16xf32>) -> (tensor<4x16xf32> {jax.result_info = "result[0]"}, tensor<50x16xf32> {jax.result_info = "result[1]"}, tensor<4x1xf32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x6xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %c_0 = stablehlo.constant dense<50> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x6xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4x6xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<4x6xi1>, tensor<4x6xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x6xi32>) -> tensor<4x6x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<50x16xf32>, tensor<4x6x1xi32>) -> tensor<4x6x16xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x6x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %cst_1 = stablehlo.constant dense<6.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %9 = stablehlo.divide %7, %8 : tensor<4x16xf32>
    %10 = stablehlo.reshape %arg1 : (tensor<4x6xi32>) -> tensor<24xi32>
    %11 = stablehlo.reshape %arg2 : (tensor<4x6x16xf32>) -> tensor<24x16xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<24xi32>
    %13 = stablehlo.compare LT, %10, %12, SIGNED : (tensor<24xi32>, tensor<24xi32>) -> tensor<24xi1>
    %c_3 = stablehlo.constant dense<50> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<24xi32>
    %15 = stablehlo.add %10, %14 : tensor<24xi32>
    %16 = stablehlo.select %13, %15, %10 : tensor<24xi1>, tensor<24xi32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<24xi32>) -> tensor<24x1xi32>
    %18 = "stablehlo.scatter"(%arg0, %17, %11) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %25 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %25 : tensor<f32>
    }) : (tensor<50x16xf32>, tensor<24x1xi32>, tensor<24x16xf32>) -> tensor<50x16xf32>
    %c_4 = stablehlo.constant dense<3> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<4x6xi32>
    %20 = stablehlo.compare GT, %arg1, %19, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %21 = stablehlo.convert %20 : (tensor<4x6xi1>) -> tensor<4x6xi32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %22 = stablehlo.reduce(%21 init: %c_5) applies stablehlo.add across dimensions = [1] : (tensor<4x6xi32>, tensor<i32>) -> tensor<4xi32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %24 = stablehlo.convert %23 : (tensor<4x1xi32>) -> tensor<4x1xf32>
    return %9, %18, %24 : tensor<4x16xf32>, tensor<50x16xf32>, tensor<4x1xf32>
  }
}
