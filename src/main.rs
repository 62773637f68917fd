fn main() {
    let close = hullsweep::kernel::default_close();
    println!(
        "{:#x} {:#x} {:#x}",
        hullsweep::kernel::fnv1a64(&close),
        close[1].to_bits(),
        close[close.len() - 1].to_bits()
    );
}
