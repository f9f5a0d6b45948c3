"""Long calls return to Python on Ctrl-C (SIGINT) within a second, with the GIL released
meanwhile (docs/python.md, "Long calls and Ctrl-C")."""

import os
import signal
import threading
import time

import pytest

import mfq


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals go to the main thread")
def test_ctrl_c_interrupts_a_long_simulation_within_a_second():
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    ticks = []
    stop = threading.Event()

    def other_thread():  # runs while the call holds no GIL
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)

    # Python's own Ctrl-C handler (a shell may start a background job with SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    t = threading.Thread(target=other_thread)
    t.start()
    timer = threading.Timer(0.5, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # minutes of work without the interrupt; the worker itself stops at max_seconds
            m.simulate(200_000, time=1e6, warmup=0.0, replications=1, max_seconds=3.0)
        returned = time.perf_counter()
    finally:
        stop.set()
        t.join()
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert sent, "the timer did not fire"
    assert returned - sent[0] < 1.0
    assert len(ticks) >= 10  # the other thread ran during the call


def test_a_simulation_stopped_before_any_batch_reports_no_estimates(root):
    """max_seconds that runs out before the first batch (200,000 servers over 1e6 mean job sizes
    in 25 batches: a batch is some 1e10 events): with strict=False every estimate is None and
    the tail and extras are empty (they were Estimates of NaN, n = 0); strict raises."""
    m = mfq.Model(kind="jsq", lam=0.9, d=2)
    sim = m.simulate(200_000, time=1e6, warmup=0.0, replications=1, max_seconds=0.05, strict=False)
    assert sim.status == "time-limit"
    for field in ("mean_queue_length", "mean_response_time", "throughput", "loss_probability", "prob_wait"):
        assert getattr(sim, field) is None, (field, getattr(sim, field))
    assert sim.tail.size == 0 and sim.tail_half_width.size == 0 and sim.extras == {}
    # a kind with extras (per-class estimates) likewise: nothing undefined is reported
    h = mfq.Model.from_file(root / "models" / "hetero-sa-jsq-caseA.toml")
    sim = h.simulate(200_000, time=1e6, warmup=0.0, replications=1, max_seconds=0.05, strict=False)
    assert sim.status == "time-limit" and sim.mean_queue_length is None and sim.extras == {}, sim.extras
    with pytest.raises(mfq.NotConverged) as e:
        m.simulate(200_000, time=1e6, warmup=0.0, replications=1, max_seconds=0.05)
    assert e.value.status == "time-limit" and e.value.result.status == "time-limit"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals go to the main thread")
def test_ctrl_c_cancels_the_work_of_a_sweep():
    """Jobs bounded by a deadline (fixed points, refined terms, checker, sweeps) get the cancel
    flag: after Ctrl-C the worker stops at its next point instead of running on, so the process
    uses (almost) no CPU time once the call has returned."""
    # an interrupted simulation of an earlier test stops at its next check of the cancel flag
    # (every 4096 events): wait until this process is idle before measuring
    for _ in range(50):
        cpu = time.process_time()
        time.sleep(0.2)
        if time.process_time() - cpu < 0.02:
            break
    m = mfq.Model(kind="jsq", lam=0.5, d=2)
    lam = [0.1 + 0.89 * i / 100_000 for i in range(100_000)]  # about 2.5 s of fixed points (the cap of an axis)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            mfq.sweep(m, lam=lam)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    time.sleep(0.2)  # the worker sees the flag at its next point
    cpu = time.process_time()
    time.sleep(1.0)
    used = time.process_time() - cpu
    assert used < 0.3, f"the cancelled sweep still used {used:.2f} s of CPU in 1 s"
