//! A stub of the burn_tensor names that poolspec's Burn export uses, with Burn's signatures: enough for rustc to
//! type-check the generated test modules. Nothing here computes.
#![allow(unused_variables, dead_code)]

#[derive(Default)]
pub struct Device;
pub struct Tensor<const D: usize>;
pub struct TensorInt<const D: usize>;
pub struct TensorData;
pub struct Gradients;
pub struct Tolerance;

impl Tolerance {
    pub fn rel_abs(relative: f64, absolute: f64) -> Self {
        Tolerance
    }
}

impl TensorData {
    pub fn assert_approx_eq<F>(&self, other: &TensorData, tolerance: Tolerance) {}
    pub fn assert_eq(&self, other: &TensorData, strict: bool) {}
}

impl<const D: usize> Tensor<D> {
    pub fn from_floats<A>(data: A, device: &Device) -> Self {
        Tensor
    }
    pub fn into_data(self) -> TensorData {
        TensorData
    }
    pub fn require_grad(self) -> Self {
        self
    }
    pub fn sum(self) -> Tensor<1> {
        Tensor
    }
    pub fn backward(self) -> Gradients {
        Gradients
    }
    pub fn grad(&self, grads: &Gradients) -> Option<Tensor<D>> {
        Some(Tensor)
    }
    pub fn grid_sample_2d(self, grid: Tensor<D>, options: ops::GridSampleOptions) -> Tensor<D> {
        self
    }
}

impl<const D: usize> Clone for Tensor<D> {
    fn clone(&self) -> Self {
        Tensor
    }
}

impl<const D: usize> core::ops::Mul for Tensor<D> {
    type Output = Tensor<D>;
    fn mul(self, rhs: Self) -> Self {
        Tensor
    }
}

impl<const D: usize> TensorInt<D> {
    pub fn from_ints<A>(data: A, device: &Device) -> Self {
        TensorInt
    }
    pub fn into_data(self) -> TensorData {
        TensorData
    }
}

pub mod ops {
    pub enum InterpolateMode {
        Nearest,
        Bilinear,
        Bicubic,
        Lanczos3,
    }

    pub struct InterpolateOptions {
        pub mode: InterpolateMode,
        pub align_corners: bool,
    }

    pub enum GridSamplePaddingMode {
        Zeros,
        Border,
        Reflection,
    }

    pub struct GridSampleOptions {
        pub mode: InterpolateMode,
        pub padding_mode: GridSamplePaddingMode,
        pub align_corners: bool,
    }

    impl GridSampleOptions {
        pub fn new(mode: InterpolateMode) -> Self {
            Self { mode, padding_mode: GridSamplePaddingMode::Zeros, align_corners: false }
        }
        pub fn with_padding_mode(mut self, padding_mode: GridSamplePaddingMode) -> Self {
            self.padding_mode = padding_mode;
            self
        }
        pub fn with_align_corners(mut self, align_corners: bool) -> Self {
            self.align_corners = align_corners;
            self
        }
    }

    impl InterpolateOptions {
        pub fn new(mode: InterpolateMode) -> Self {
            Self { mode, align_corners: true }
        }
        pub fn with_align_corners(mut self, align_corners: bool) -> Self {
            self.align_corners = align_corners;
            self
        }
    }
}

pub mod module {
    use super::ops::InterpolateOptions;
    use super::{Tensor, TensorInt};

    pub fn avg_pool1d(x: Tensor<3>, kernel_size: usize, stride: usize, padding: usize, count_include_pad: bool,
                      ceil_mode: bool) -> Tensor<3> {
        x
    }
    pub fn avg_pool2d(x: Tensor<4>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2],
                      count_include_pad: bool, ceil_mode: bool) -> Tensor<4> {
        x
    }
    pub fn max_pool1d(x: Tensor<3>, kernel_size: usize, stride: usize, padding: usize, dilation: usize,
                      ceil_mode: bool) -> Tensor<3> {
        x
    }
    pub fn max_pool2d(x: Tensor<4>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2],
                      dilation: [usize; 2], ceil_mode: bool) -> Tensor<4> {
        x
    }
    pub fn max_pool1d_with_indices(x: Tensor<3>, kernel_size: usize, stride: usize, padding: usize,
                                   dilation: usize, ceil_mode: bool) -> (Tensor<3>, TensorInt<3>) {
        (x, TensorInt)
    }
    pub fn max_pool2d_with_indices(x: Tensor<4>, kernel_size: [usize; 2], stride: [usize; 2],
                                   padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool)
                                   -> (Tensor<4>, TensorInt<4>) {
        (x, TensorInt)
    }
    pub fn adaptive_avg_pool1d(x: Tensor<3>, output_size: usize) -> Tensor<3> {
        x
    }
    pub fn adaptive_avg_pool2d(x: Tensor<4>, output_size: [usize; 2]) -> Tensor<4> {
        x
    }
    pub fn interpolate(x: Tensor<4>, output_size: [usize; 2], options: InterpolateOptions) -> Tensor<4> {
        x
    }
}
