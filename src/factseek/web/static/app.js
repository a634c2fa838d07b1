// factseek web app: stream a check's progress, and ask before deleting. Everything else is plain
// HTML forms, so the app works without this file (the progress page then refreshes itself).
"use strict";

function streamProgress(list) {
  const note = document.getElementById("progress-note");
  const source = new EventSource(list.dataset.events);
  source.addEventListener("stage", (e) => {
    const stage = JSON.parse(e.data);
    // a stage event means that stage started: everything before it is done
    const items = Array.from(list.querySelectorAll("li"));
    const i = items.findIndex((li) => li.dataset.stage === stage);
    items.forEach((li, j) => { li.classList.toggle("done", j < i); li.classList.toggle("active", j === i); });
    if (note) note.textContent = "Running: " + stage + "…";
  });
  const finish = (e) => {
    source.close();
    for (const li of list.querySelectorAll("li")) { li.classList.remove("active"); li.classList.add("done"); }
    window.location.assign(JSON.parse(e.data));
  };
  source.addEventListener("done", finish);
  source.addEventListener("failed", finish);
  source.onerror = () => { source.close(); setTimeout(() => window.location.reload(), 1500); };
}

document.addEventListener("DOMContentLoaded", () => {
  const list = document.getElementById("stages");
  if (list && list.dataset.events && window.EventSource) streamProgress(list);
  for (const form of document.querySelectorAll("form.confirm")) {
    form.addEventListener("submit", (e) => {
      if (!window.confirm(form.dataset.confirm || "Are you sure?")) e.preventDefault();
    });
  }
});
