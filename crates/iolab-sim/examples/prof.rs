use iolab_core::job::{Job, JobSpec};
fn job(access: &str, seconds: f64) -> Job {
    let text = format!("name = \"p\"\naccess = \"{access}\"\nblock_size = \"4k\"\nqueue_depth = 32\nduration_s = {seconds}\n");
    toml::from_str::<JobSpec>(&text)
        .unwrap()
        .validate()
        .unwrap()
}
fn main() {
    let mut sim = iolab_sim::open("sim:ssd750-1200@z97/cpu", None).unwrap();
    sim.precondition_fill();
    sim.precondition_steady();
    sim.idle(2.0);
    let r = sim.run_job(&job("randwrite", 2.0), None).unwrap().result;
    eprintln!("IOS {}", r.read.ios + r.write.ios);
}
