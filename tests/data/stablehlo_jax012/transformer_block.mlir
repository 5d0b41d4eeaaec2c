module @jit_transformer_block attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<64xf32>, %arg6: tensor<128xf32>, %arg7: tensor<64xf32>, %arg8: tensor<64xf32>, %arg9: tensor<64xf32>, %arg10: tensor<64x128xf32>, %arg11: tensor<128x64xf32>, %arg12: tensor<64x64xf32>, %arg13: tensor<64x64xf32>, %arg14: tensor<64x64xf32>, %arg15: tensor<64x64xf32>, %arg16: tensor<2x16x64xf32>) -> (tensor<2x16x64xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg16 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<2x16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %5 = stablehlo.subtract %arg16, %4 : tensor<2x16x64xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<2x16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<2x16x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %12 = stablehlo.subtract %arg16, %11 : tensor<2x16x64xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %14 = stablehlo.add %10, %13 : tensor<2x16x1xf32>
    %15 = stablehlo.rsqrt %14 : tensor<2x16x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %17 = stablehlo.multiply %12, %16 : tensor<2x16x64xf32>
    %18 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<2x16x64xf32>
    %21 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %23 = stablehlo.add %20, %22 : tensor<2x16x64xf32>
    %24 = stablehlo.dot_general %23, %arg14, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %25 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %27 = stablehlo.add %24, %26 : tensor<2x16x64xf32>
    %28 = stablehlo.dot_general %23, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %29 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %31 = stablehlo.add %28, %30 : tensor<2x16x64xf32>
    %32 = stablehlo.dot_general %23, %arg15, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %33 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %35 = stablehlo.add %32, %34 : tensor<2x16x64xf32>
    %36 = stablehlo.reshape %27 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %37 = stablehlo.transpose %36, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %38 = stablehlo.reshape %31 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %39 = stablehlo.transpose %38, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %40 = stablehlo.reshape %35 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %41 = stablehlo.transpose %40, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %42 = stablehlo.transpose %39, dims = [0, 1, 3, 2] : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %43 = stablehlo.dot_general %37, %42, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %cst_4 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %44 = stablehlo.sqrt %cst_4 : tensor<f32>
    %45 = stablehlo.convert %44 : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [] : (tensor<f32>) -> tensor<2x4x16x16xf32>
    %47 = stablehlo.divide %43, %46 : tensor<2x4x16x16xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %48 = stablehlo.reduce(%47 init: %cst_5) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x4x16xf32>
    %50 = stablehlo.maximum %49, %48 : tensor<2x4x16xf32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x1xf32>
    %52 = stablehlo.broadcast_in_dim %51, dims = [0, 1, 2, 3] : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %53 = stablehlo.subtract %47, %52 : tensor<2x4x16x16xf32>
    %54 = stablehlo.exponential %53 : tensor<2x4x16x16xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %55 = stablehlo.reduce(%54 init: %cst_7) applies stablehlo.add across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
    %56 = stablehlo.broadcast_in_dim %55, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x1xf32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [0, 1, 2, 3] : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %58 = stablehlo.divide %54, %57 : tensor<2x4x16x16xf32>
    %59 = stablehlo.dot_general %58, %41, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %60 = stablehlo.transpose %59, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %61 = stablehlo.reshape %60 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %62 = stablehlo.dot_general %61, %arg13, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %63 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %65 = stablehlo.add %62, %64 : tensor<2x16x64xf32>
    %66 = stablehlo.add %arg16, %65 : tensor<2x16x64xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %67 = stablehlo.reduce(%66 init: %cst_8) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %68 = stablehlo.broadcast_in_dim %67, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_9 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %70 = stablehlo.divide %68, %69 : tensor<2x16x1xf32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %72 = stablehlo.subtract %66, %71 : tensor<2x16x64xf32>
    %73 = stablehlo.multiply %72, %72 : tensor<2x16x64xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.reduce(%73 init: %cst_10) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %75 = stablehlo.broadcast_in_dim %74, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_11 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %77 = stablehlo.divide %75, %76 : tensor<2x16x1xf32>
    %78 = stablehlo.broadcast_in_dim %70, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %79 = stablehlo.subtract %66, %78 : tensor<2x16x64xf32>
    %cst_12 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %80 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %81 = stablehlo.add %77, %80 : tensor<2x16x1xf32>
    %82 = stablehlo.rsqrt %81 : tensor<2x16x1xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %84 = stablehlo.multiply %79, %83 : tensor<2x16x64xf32>
    %85 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %86 = stablehlo.broadcast_in_dim %85, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %87 = stablehlo.multiply %84, %86 : tensor<2x16x64xf32>
    %88 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %89 = stablehlo.broadcast_in_dim %88, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %90 = stablehlo.add %87, %89 : tensor<2x16x64xf32>
    %91 = stablehlo.dot_general %90, %arg10, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x128xf32>) -> tensor<2x16x128xf32>
    %92 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %93 = stablehlo.broadcast_in_dim %92, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<2x16x128xf32>
    %94 = stablehlo.add %91, %93 : tensor<2x16x128xf32>
    %95 = stablehlo.multiply %94, %94 : tensor<2x16x128xf32>
    %96 = stablehlo.multiply %95, %94 : tensor<2x16x128xf32>
    %cst_13 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %97 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %98 = stablehlo.multiply %97, %96 : tensor<2x16x128xf32>
    %99 = stablehlo.add %94, %98 : tensor<2x16x128xf32>
    %cst_14 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<2x16x128xf32>
    %102 = stablehlo.tanh %101 : tensor<2x16x128xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %103 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %104 = stablehlo.add %103, %102 : tensor<2x16x128xf32>
    %cst_16 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %105 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<2x16x128xf32>
    %107 = stablehlo.multiply %94, %106 : tensor<2x16x128xf32>
    %108 = stablehlo.dot_general %107, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x128xf32>, tensor<128x64xf32>) -> tensor<2x16x64xf32>
    %109 = stablehlo.add %66, %108 : tensor<2x16x64xf32>
    %110 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %111 = stablehlo.broadcast_in_dim %110, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %112 = stablehlo.add %109, %111 : tensor<2x16x64xf32>
    return %112 : tensor<2x16x64xf32>
  }
}
