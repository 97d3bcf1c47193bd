"""The simulated Wuji Hand 2 (MuJoCo 4.0): model (`model`), taxel layout (`taxels`), contact-solution
forces (`contact_forces`), the stepped hand (`hand_sim`), metadata (`layout_metadata`), scenarios
(`scenarios`) and the producer (`producer`). See docs/sim.md."""
