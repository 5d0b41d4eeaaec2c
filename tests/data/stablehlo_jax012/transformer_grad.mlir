module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<64xf32>, %arg6: tensor<128xf32>, %arg7: tensor<64xf32>, %arg8: tensor<64xf32>, %arg9: tensor<64x128xf32>, %arg10: tensor<128x64xf32>, %arg11: tensor<64x64xf32>, %arg12: tensor<64x64xf32>, %arg13: tensor<64x64xf32>, %arg14: tensor<64x64xf32>, %arg15: tensor<2x16x64xf32>) -> (tensor<64xf32> {jax.result_info = "result['b1']"}, tensor<64xf32> {jax.result_info = "result['b2']"}, tensor<64xf32> {jax.result_info = "result['bwk']"}, tensor<64xf32> {jax.result_info = "result['bwo']"}, tensor<64xf32> {jax.result_info = "result['bwq']"}, tensor<64xf32> {jax.result_info = "result['bwv']"}, tensor<128xf32> {jax.result_info = "result['c1']"}, tensor<64xf32> {jax.result_info = "result['c2']"}, tensor<64xf32> {jax.result_info = "result['g1']"}, tensor<64xf32> {jax.result_info = "result['g2']"}, tensor<64x128xf32> {jax.result_info = "result['w1']"}, tensor<128x64xf32> {jax.result_info = "result['w2']"}, tensor<64x64xf32> {jax.result_info = "result['wk']"}, tensor<64x64xf32> {jax.result_info = "result['wo']"}, tensor<64x64xf32> {jax.result_info = "result['wq']"}, tensor<64x64xf32> {jax.result_info = "result['wv']"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg15 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<2x16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %5 = stablehlo.subtract %arg15, %4 : tensor<2x16x64xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<2x16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<2x16x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %12 = stablehlo.subtract %arg15, %11 : tensor<2x16x64xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %14 = stablehlo.add %10, %13 : tensor<2x16x1xf32>
    %15 = stablehlo.rsqrt %14 : tensor<2x16x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %17 = stablehlo.multiply %12, %16 : tensor<2x16x64xf32>
    %18 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<2x16x64xf32>
    %21 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %23 = stablehlo.add %20, %22 : tensor<2x16x64xf32>
    %24 = stablehlo.dot_general %23, %arg13, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %25 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %27 = stablehlo.add %24, %26 : tensor<2x16x64xf32>
    %28 = stablehlo.dot_general %23, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %29 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %31 = stablehlo.add %28, %30 : tensor<2x16x64xf32>
    %32 = stablehlo.dot_general %23, %arg14, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
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
    %59 = stablehlo.multiply %56, %56 : tensor<2x4x16x1xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2x4x16x1xf32>
    %61 = stablehlo.divide %60, %59 : tensor<2x4x16x1xf32>
    %62 = stablehlo.dot_general %58, %41, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %63 = stablehlo.transpose %62, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %64 = stablehlo.reshape %63 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %65 = stablehlo.dot_general %64, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %66 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %68 = stablehlo.add %65, %67 : tensor<2x16x64xf32>
    %69 = stablehlo.add %arg15, %68 : tensor<2x16x64xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.reduce(%69 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_10 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %73 = stablehlo.divide %71, %72 : tensor<2x16x1xf32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %75 = stablehlo.subtract %69, %74 : tensor<2x16x64xf32>
    %76 = stablehlo.multiply %75, %75 : tensor<2x16x64xf32>
    %cst_11 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x16x64xf32>
    %78 = stablehlo.multiply %77, %75 : tensor<2x16x64xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %79 = stablehlo.reduce(%76 init: %cst_12) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %cst_13 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %82 = stablehlo.divide %80, %81 : tensor<2x16x1xf32>
    %83 = stablehlo.broadcast_in_dim %73, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %84 = stablehlo.subtract %69, %83 : tensor<2x16x64xf32>
    %cst_14 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %86 = stablehlo.add %82, %85 : tensor<2x16x1xf32>
    %87 = stablehlo.rsqrt %86 : tensor<2x16x1xf32>
    %88 = stablehlo.divide %87, %86 : tensor<2x16x1xf32>
    %cst_15 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %89 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %90 = stablehlo.multiply %89, %88 : tensor<2x16x1xf32>
    %91 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %92 = stablehlo.multiply %84, %91 : tensor<2x16x64xf32>
    %93 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %94 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %95 = stablehlo.multiply %92, %94 : tensor<2x16x64xf32>
    %96 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %97 = stablehlo.broadcast_in_dim %96, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %98 = stablehlo.add %95, %97 : tensor<2x16x64xf32>
    %99 = stablehlo.dot_general %98, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x128xf32>) -> tensor<2x16x128xf32>
    %100 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %101 = stablehlo.broadcast_in_dim %100, dims = [0, 1, 2] : (tensor<1x1x128xf32>) -> tensor<2x16x128xf32>
    %102 = stablehlo.add %99, %101 : tensor<2x16x128xf32>
    %103 = stablehlo.multiply %102, %102 : tensor<2x16x128xf32>
    %104 = stablehlo.multiply %103, %102 : tensor<2x16x128xf32>
    %105 = stablehlo.multiply %102, %102 : tensor<2x16x128xf32>
    %cst_16 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %106 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %107 = stablehlo.multiply %106, %105 : tensor<2x16x128xf32>
    %cst_17 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %109 = stablehlo.multiply %108, %104 : tensor<2x16x128xf32>
    %110 = stablehlo.add %102, %109 : tensor<2x16x128xf32>
    %cst_18 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %111 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %112 = stablehlo.multiply %111, %110 : tensor<2x16x128xf32>
    %113 = stablehlo.tanh %112 : tensor<2x16x128xf32>
    %cst_19 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %114 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %115 = stablehlo.add %114, %113 : tensor<2x16x128xf32>
    %cst_20 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %116 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %117 = stablehlo.subtract %116, %113 : tensor<2x16x128xf32>
    %118 = stablehlo.multiply %115, %117 : tensor<2x16x128xf32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %120 = stablehlo.add %119, %113 : tensor<2x16x128xf32>
    %cst_22 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %121 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %122 = stablehlo.multiply %121, %120 : tensor<2x16x128xf32>
    %123 = stablehlo.multiply %102, %122 : tensor<2x16x128xf32>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<2x16x64xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %125 = stablehlo.reduce(%124 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %126 = stablehlo.reshape %125 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %127 = stablehlo.reduce(%126 init: %cst_25) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %128 = stablehlo.dot_general %124, %123, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<2x16x128xf32>) -> tensor<64x128xf32>
    %129 = stablehlo.transpose %128, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %130 = stablehlo.dot_general %124, %arg10, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<128x64xf32>) -> tensor<2x16x128xf32>
    %131 = stablehlo.multiply %102, %130 : tensor<2x16x128xf32>
    %132 = stablehlo.multiply %130, %122 : tensor<2x16x128xf32>
    %cst_26 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %134 = stablehlo.multiply %133, %131 : tensor<2x16x128xf32>
    %135 = stablehlo.multiply %134, %118 : tensor<2x16x128xf32>
    %cst_27 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %136 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %137 = stablehlo.multiply %136, %135 : tensor<2x16x128xf32>
    %138 = stablehlo.add %132, %137 : tensor<2x16x128xf32>
    %cst_28 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<2x16x128xf32>
    %140 = stablehlo.multiply %139, %137 : tensor<2x16x128xf32>
    %141 = stablehlo.multiply %140, %107 : tensor<2x16x128xf32>
    %142 = stablehlo.add %138, %141 : tensor<2x16x128xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %143 = stablehlo.reduce(%142 init: %cst_29) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x128xf32>, tensor<f32>) -> tensor<128xf32>
    %144 = stablehlo.reshape %143 : (tensor<128xf32>) -> tensor<1x1x128xf32>
    %cst_30 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %145 = stablehlo.reduce(%144 init: %cst_30) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x128xf32>, tensor<f32>) -> tensor<128xf32>
    %146 = stablehlo.dot_general %142, %98, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x128xf32>, tensor<2x16x64xf32>) -> tensor<128x64xf32>
    %147 = stablehlo.transpose %146, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %148 = stablehlo.dot_general %142, %arg9, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x128xf32>, tensor<64x128xf32>) -> tensor<2x16x64xf32>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %149 = stablehlo.reduce(%148 init: %cst_31) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %150 = stablehlo.reshape %149 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %151 = stablehlo.reduce(%150 init: %cst_32) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %152 = stablehlo.multiply %92, %148 : tensor<2x16x64xf32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %153 = stablehlo.reduce(%152 init: %cst_33) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %154 = stablehlo.reshape %153 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %155 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x16x64xf32>
    %156 = stablehlo.multiply %148, %155 : tensor<2x16x64xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %157 = stablehlo.reduce(%154 init: %cst_34) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %158 = stablehlo.multiply %84, %156 : tensor<2x16x64xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %159 = stablehlo.reduce(%158 init: %cst_35) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %160 = stablehlo.reshape %159 : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %161 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
    %162 = stablehlo.multiply %156, %161 : tensor<2x16x64xf32>
    %163 = stablehlo.multiply %160, %90 : tensor<2x16x1xf32>
    %164 = stablehlo.negate %162 : tensor<2x16x64xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %165 = stablehlo.reduce(%164 init: %cst_36) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %166 = stablehlo.reshape %165 : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %167 = stablehlo.add %124, %162 : tensor<2x16x64xf32>
    %cst_37 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %168 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %169 = stablehlo.divide %163, %168 : tensor<2x16x1xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %170 = stablehlo.reduce(%169 init: %cst_38) applies stablehlo.add across dimensions = [2] : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16xf32>
    %171 = stablehlo.broadcast_in_dim %170, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x64xf32>
    %172 = stablehlo.multiply %171, %78 : tensor<2x16x64xf32>
    %173 = stablehlo.negate %172 : tensor<2x16x64xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %174 = stablehlo.reduce(%173 init: %cst_39) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %175 = stablehlo.reshape %174 : (tensor<2x16xf32>) -> tensor<2x16x1xf32>
    %176 = stablehlo.add %167, %172 : tensor<2x16x64xf32>
    %177 = stablehlo.add %166, %175 : tensor<2x16x1xf32>
    %cst_40 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %178 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<2x16x1xf32>
    %179 = stablehlo.divide %177, %178 : tensor<2x16x1xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %180 = stablehlo.reduce(%179 init: %cst_41) applies stablehlo.add across dimensions = [2] : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16xf32>
    %181 = stablehlo.broadcast_in_dim %180, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x64xf32>
    %182 = stablehlo.add %176, %181 : tensor<2x16x64xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %183 = stablehlo.reduce(%182 init: %cst_42) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %184 = stablehlo.reshape %183 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %185 = stablehlo.reduce(%184 init: %cst_43) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %186 = stablehlo.dot_general %182, %64, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<64x64xf32>
    %187 = stablehlo.transpose %186, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %188 = stablehlo.dot_general %182, %arg12, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %189 = stablehlo.reshape %188 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %190 = stablehlo.transpose %189, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %191 = stablehlo.dot_general %190, %58, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %192 = stablehlo.transpose %191, dims = [0, 1, 3, 2] : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %193 = stablehlo.dot_general %190, %41, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %194 = stablehlo.broadcast_in_dim %61, dims = [0, 1, 2, 3] : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %195 = stablehlo.multiply %193, %194 : tensor<2x4x16x16xf32>
    %196 = stablehlo.multiply %195, %54 : tensor<2x4x16x16xf32>
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %197 = stablehlo.reduce(%196 init: %cst_44) applies stablehlo.add across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
    %198 = stablehlo.reshape %197 : (tensor<2x4x16xf32>) -> tensor<2x4x16x1xf32>
    %199 = stablehlo.negate %198 : tensor<2x4x16x1xf32>
    %200 = stablehlo.broadcast_in_dim %56, dims = [0, 1, 2, 3] : (tensor<2x4x16x1xf32>) -> tensor<2x4x16x16xf32>
    %201 = stablehlo.divide %193, %200 : tensor<2x4x16x16xf32>
    %cst_45 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %202 = stablehlo.reduce(%199 init: %cst_45) applies stablehlo.add across dimensions = [3] : (tensor<2x4x16x1xf32>, tensor<f32>) -> tensor<2x4x16xf32>
    %203 = stablehlo.broadcast_in_dim %202, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x16xf32>
    %204 = stablehlo.add %201, %203 : tensor<2x4x16x16xf32>
    %205 = stablehlo.multiply %204, %54 : tensor<2x4x16x16xf32>
    %206 = stablehlo.broadcast_in_dim %45, dims = [] : (tensor<f32>) -> tensor<2x4x16x16xf32>
    %207 = stablehlo.divide %205, %206 : tensor<2x4x16x16xf32>
    %208 = stablehlo.dot_general %207, %37, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %209 = stablehlo.transpose %208, dims = [0, 1, 3, 2] : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %210 = stablehlo.dot_general %207, %42, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %211 = stablehlo.transpose %209, dims = [0, 1, 3, 2] : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %212 = stablehlo.transpose %192, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %213 = stablehlo.reshape %212 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %214 = stablehlo.transpose %211, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %215 = stablehlo.reshape %214 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %216 = stablehlo.transpose %210, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %217 = stablehlo.reshape %216 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %218 = stablehlo.reduce(%213 init: %cst_46) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %219 = stablehlo.reshape %218 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_47 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %220 = stablehlo.reduce(%219 init: %cst_47) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %221 = stablehlo.dot_general %213, %23, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<64x64xf32>
    %222 = stablehlo.transpose %221, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %223 = stablehlo.dot_general %213, %arg14, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %224 = stablehlo.reduce(%215 init: %cst_48) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %225 = stablehlo.reshape %224 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_49 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %226 = stablehlo.reduce(%225 init: %cst_49) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %227 = stablehlo.dot_general %215, %23, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<64x64xf32>
    %228 = stablehlo.transpose %227, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %229 = stablehlo.dot_general %215, %arg11, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %230 = stablehlo.add %223, %229 : tensor<2x16x64xf32>
    %cst_50 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %231 = stablehlo.reduce(%217 init: %cst_50) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %232 = stablehlo.reshape %231 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %233 = stablehlo.reduce(%232 init: %cst_51) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %234 = stablehlo.dot_general %217, %23, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<64x64xf32>
    %235 = stablehlo.transpose %234, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %236 = stablehlo.dot_general %217, %arg13, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %237 = stablehlo.add %230, %236 : tensor<2x16x64xf32>
    %cst_52 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %238 = stablehlo.reduce(%237 init: %cst_52) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %239 = stablehlo.reshape %238 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_53 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %240 = stablehlo.reduce(%239 init: %cst_53) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %241 = stablehlo.multiply %17, %237 : tensor<2x16x64xf32>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %242 = stablehlo.reduce(%241 init: %cst_54) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %243 = stablehlo.reshape %242 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %244 = stablehlo.reduce(%243 init: %cst_55) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    return %240, %151, %226, %185, %233, %220, %145, %127, %244, %157, %147, %129, %228, %187, %235, %222 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<128xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
  }
}
