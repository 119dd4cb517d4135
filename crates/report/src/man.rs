//! podsim's man pages (roff) from its clap commands: clap_mangen's sections, the help's
//! examples as an EXAMPLES section, one page per command and subcommand.

/// One command's man page (roff): clap_mangen's sections, with the help's EXAMPLES section
/// (podsim's `examples.rs`) as an EXAMPLES section of the page, each command on a line of its own.
pub fn page(c: &clap::Command) -> std::io::Result<Vec<u8>> {
    let examples = c.get_after_help().map(|s| s.to_string());
    let c = c.clone().after_help(None::<&str>);
    let man = clap_mangen::Man::new(c.clone());
    type Section = fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>;
    let mut sections: Vec<Section> = vec![
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
    ];
    if c.get_arguments().any(|a| !a.is_hide_set()) {
        sections.push(clap_mangen::Man::render_options_section);
    }
    if c.get_subcommands().any(|s| !s.is_hide_set()) {
        sections.push(clap_mangen::Man::render_subcommands_section);
    }
    // `topo`'s list of shorthands and presets.
    if c.get_after_long_help().is_some() {
        sections.push(clap_mangen::Man::render_extra_section);
    }
    // Each section starts with the page's preamble (the `Aq` string); the page keeps the first.
    let add = |page: &mut String, section: Section| -> std::io::Result<()> {
        let mut buf = Vec::new();
        section(&man, &mut buf)?;
        let text = String::from_utf8_lossy(&buf).into_owned();
        let body = if page.is_empty() {
            text.as_str()
        } else {
            text.splitn(3, '\n').nth(2).unwrap_or("")
        };
        page.push_str(body);
        Ok(())
    };
    let mut page = String::new();
    for section in sections {
        add(&mut page, section)?;
    }
    if let Some(text) = examples {
        page.push_str(&crate::roff_examples(&text));
    }
    if c.get_version().is_some() {
        add(&mut page, clap_mangen::Man::render_version_section)?;
    }
    Ok(page.into_bytes())
}

/// A command as its man page shows it: without the `help` subcommand (each page refers to
/// its subcommands' pages, and `help` has none), with podsim's version in the footer.
pub fn command(cmd: clap::Command) -> clap::Command {
    cmd.disable_help_subcommand(true)
        .version(env!("CARGO_PKG_VERSION"))
}

/// Every page `podsim man --out` writes, `name` first then its subcommands' (`podsim-dojo`,
/// `podsim-dojo-node`, ...) at every depth: the pages a page's SUBCOMMANDS section refers to.
pub fn pages(cmd: clap::Command, name: &str, out: &mut Vec<(String, clap::Command)>) {
    let cmd = command(cmd.name(name.to_string()));
    out.push((name.to_string(), cmd.clone()));
    for sub in cmd.get_subcommands() {
        pages(sub.clone(), &format!("{name}-{}", sub.get_name()), out);
    }
}
