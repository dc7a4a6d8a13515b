import numpy as np, torch
X=np.concatenate([np.linspace(-5.5,5.5,20001), np.random.default_rng(1).normal(0,2,20000).clip(-5.5,5.5)]).astype(np.float32)
def test_first():
    t=torch.tanh(torch.from_numpy(X)).numpy()
    assert abs(t - np.tanh(X.astype(np.float64))).max() < 1e-5
