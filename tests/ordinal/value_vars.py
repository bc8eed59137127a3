"""The value variable of the PyMC model behind each block of the ordinal model's compiled
density (shared by the tests that compare the two)."""

# the value variable of the PyMC model behind each block of the compiled density's vector
VALUE_VARS = {
    "sys_z": "system_z",
    "log_sq": "sigma_question_log__",
    "qz": "question_z",
    "log_se": "sigma_residual_log__",
    "ez": "residual_z",
    "log_tau": "sigma_sentence_shifted",
    "wz": "sentence_z",
    "lm": "log_discrimination_design",
    "log_su": "sigma_discrimination_rater_log__",
    "log_sv": "sigma_discrimination_cell_log__",
    "uz": "discrimination_rater_z",
    "vz": "discrimination_cell_z",
    "log_sa": "sigma_severity_rater_log__",
    "log_sb": "sigma_severity_cell_log__",
    "az": "severity_rater_z",
    "bz": "severity_cell_z",
    "beta": "length_effect",
    "log_sl": "sigma_length_rater_log__",
    "lz": "length_rater_z",
    "jl": "judge_log_discrimination",
    "js": "judge_severity",
    "jb": "judge_length_effect",
    "cuts": "cutpoints_ordered__",
}
