import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { Markdown } from "./Markdown";

function html(text: string): HTMLElement {
  return render(<Markdown text={text} onEntity={vi.fn()} />).container;
}

describe("Markdown", () => {
  it("renders markdown and GFM tables", () => {
    const c = html("**bold**\n\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(c.querySelector("strong")?.textContent).toBe("bold");
    expect(c.querySelector("table")).not.toBeNull();
  });

  it("never renders raw HTML", () => {
    const c = html('Hi <script>alert(1)</script><img src="https://x/y.png" onerror="alert(1)"><b>raw</b>');
    expect(c.querySelector("script")).toBeNull();
    expect(c.querySelector("img")).toBeNull();
    expect(c.querySelector("b")).toBeNull();
  });

  it("keeps only http, https and mailto links", () => {
    const c = html("[a](https://pubmed.ncbi.nlm.nih.gov/) [b](javascript:alert(1)) [c](mailto:x@y.org) [d](data:text/html,hi) [e](/relative)");
    const hrefs = [...c.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(hrefs).toEqual(["https://pubmed.ncbi.nlm.nih.gov/", "mailto:x@y.org"]);
    expect(c.textContent).toContain("b");
    expect(c.querySelector("a[href='https://pubmed.ncbi.nlm.nih.gov/']")?.getAttribute("rel")).toContain("noopener");
  });

  it("shows images as links, never loading them", () => {
    const c = html("![a chart](https://example.org/chart.png) ![evil](javascript:alert(1))");
    expect(c.querySelector("img")).toBeNull();
    const link = c.querySelector("a.image-link");
    expect(link?.getAttribute("href")).toBe("https://example.org/chart.png");
    expect(link?.textContent).toContain("a chart");
    expect(c.textContent).toContain("[image: evil]");
  });

  it("links NCT ids and PMIDs into the page, but not inside code", () => {
    const onEntity = vi.fn();
    const { container } = render(
      <Markdown text={"See NCT04613596 and PMID: 12345678, also PMID 42. `NCT00000000` stays code."} onEntity={onEntity} />,
    );
    const links = screen.getAllByTestId("entity-link");
    expect(links.map((a) => a.textContent)).toEqual(["NCT04613596", "PMID: 12345678", "PMID 42"]);
    expect(links[0].getAttribute("href")).toBe("/trialscout?nct=NCT04613596");
    fireEvent.click(links[0]);
    fireEvent.click(links[1]);
    expect(onEntity.mock.calls).toEqual([
      ["nct", "NCT04613596"],
      ["pmid", "12345678"],
    ]);
    expect(container.querySelector("code")?.textContent).toBe("NCT00000000");
  });

  it("does not link NCT-like text with the wrong number of digits", () => {
    html("NCT1234567 and NCT123456789");
    expect(screen.queryAllByTestId("entity-link")).toHaveLength(0);
  });
});
