//! The test-harness names Burn's backend tests provide to their modules through `use super::*`.
#![allow(unused)]

pub type TestTensor<const D: usize> = burn_tensor::Tensor<D>;
pub type TestTensorInt<const D: usize> = burn_tensor::TensorInt<D>;
pub type TestAutodiffTensor<const D: usize> = burn_tensor::Tensor<D>;
pub type FloatElem = f32;
