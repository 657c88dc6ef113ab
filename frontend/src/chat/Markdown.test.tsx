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

  it("shows images as inert text naming their domain: no img, no link, no query string", () => {
    const c = html(
      "![a chart](https://example.org/chart.png) ![](https://evil.example/p.png?secret=1) " +
        "![evil](javascript:alert(1)) ![ref][r]\n\n[r]: http://tracker.example:8080/t.gif?u=alice",
    );
    expect(c.querySelector("img")).toBeNull();
    expect(c.querySelector("a")).toBeNull();
    expect([...c.querySelectorAll(".image-ref")].map((e) => e.textContent)).toEqual([
      "[image: a chart (example.org)]",
      "[image: evil.example]",
      "[image: evil]",
      "[image: ref (tracker.example)]",
    ]);
    expect(c.innerHTML).not.toContain("secret");
    expect(c.innerHTML).not.toContain("u=alice");
    expect(c.innerHTML).not.toContain("chart.png");
  });

  it("keeps an image inside a link inert, the link itself kept", () => {
    const c = html("[![logo](https://cdn.example/logo.png?id=7)](https://pubmed.ncbi.nlm.nih.gov/)");
    expect(c.querySelector("img")).toBeNull();
    const links = [...c.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://pubmed.ncbi.nlm.nih.gov/"]);
    expect(links[0].textContent).toBe("[image: logo (cdn.example)]");
    expect(c.innerHTML).not.toContain("id=7");
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
